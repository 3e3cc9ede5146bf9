"""snapshot.mode=when_needed on a replica that purged the binlog the offsets name: a new
snapshot from the current position (Debezium's when_needed); initial stops there."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.connector_tools import (
    ConnectorProcess,
    SourcePair,
    connector_document,
    rebuild,
    source_rows,
)
from tests.integration.test_streaming import wait_caught_up
from tests.kafka_services import Broker


@pytest.fixture
def purged_replica(source: SourcePair) -> Iterator[SourcePair]:
    """A replica of the session's primary of its own, whose binlogs the test purges."""
    pair = source.another_replica(f"whenneeded-{source.flavour}", server_id=22)
    yield pair
    pair.replica.stop()


@contextmanager
def three_rows_streamed(pair: SourcePair, broker: Broker, db: str, mode: str,
                        tmp_path: Path) -> Iterator[tuple[ConnectorProcess, dict[str, Any]]]:
    """The connector with `snapshot.mode=mode`, rows 1-3 streamed and committed; killed on
    the way out if it still runs."""
    pair.primary.execute(f"CREATE DATABASE {db}")
    pair.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(10))")
    doc = connector_document(pair, broker, db, snapshot__mode=mode)
    proc = ConnectorProcess(doc, tmp_path)
    proc.start()
    try:
        proc.wait_log("binlog stream open")
        for i in (1, 2, 3):
            pair.primary.execute(f"INSERT INTO {db}.t VALUES ({i}, 'streamed')")
        wait_caught_up(pair, broker, doc, timeout=120)
        yield proc, doc
    finally:
        proc.ensure_stopped()


def stream_then_purge(pair: SourcePair, broker: Broker, db: str, mode: str,
                      tmp_path: Path) -> tuple[ConnectorProcess, dict[str, Any]]:
    """Rows 1-3 streamed and committed, the connector stopped; then rows written and
    changed while it is away, and the replica's binlogs holding them purged."""
    with three_rows_streamed(pair, broker, db, mode, tmp_path) as (proc, doc):
        assert proc.stop() == 0
    pair.primary.execute(f"INSERT INTO {db}.t VALUES (4, 'away'), (5, 'away')")
    pair.primary.execute(f"UPDATE {db}.t SET v = 'changed' WHERE id = 2")
    pair.wait_synced()
    pair.replica.purge_older_binlogs()
    return proc, doc


def test_when_needed_snapshots_again_when_the_offsets_binlog_is_purged(
        purged_replica: SourcePair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    pair, db = purged_replica, unique_name
    proc, doc = stream_then_purge(pair, broker, db, "when_needed", tmp_path)
    before = len(rebuild(broker.bootstrap, f"{db}.{db}.t")[1])
    proc.start()
    try:
        proc.wait_log(f"snapshot of {db}.t complete", timeout=120)
        pair.primary.execute(f"INSERT INTO {db}.t VALUES (6, 'live')")
        wait_caught_up(pair, broker, doc, timeout=120)
        assert proc.stop() == 0
    finally:
        proc.ensure_stopped()
    log = proc.log()[proc.log_offset:]
    warnings = [line for line in log.splitlines() if "WARNING" in line]
    assert len(warnings) == 1, warnings
    assert ("snapshot.mode=when_needed: the replica no longer has the binlog for the "
            "committed offsets' GTID ") in warnings[0]
    assert ("(purged); a new snapshot of every captured table starts, streaming from the "
            "replica's current position") in warnings[0]
    rebuilt, envelopes = rebuild(broker.bootstrap, f"{db}.{db}.t")
    assert rebuilt == source_rows(pair, db, "t", ["id"])
    # The second start read every row in its snapshot, then streamed row 6.
    assert [(e["op"], e["after"]["id"]) for e in envelopes[before:]] == [
        ("r", 1), ("r", 2), ("r", 3), ("r", 4), ("r", 5), ("c", 6)]


def test_initial_stops_when_the_offsets_binlog_is_purged(
        purged_replica: SourcePair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    pair, db = purged_replica, unique_name
    proc, _ = stream_then_purge(pair, broker, db, "initial", tmp_path)
    proc.start()
    try:
        assert proc.proc is not None
        assert proc.proc.wait(60) == 1
    finally:
        proc.ensure_stopped()
    log = proc.log()[proc.log_offset:]
    assert "the replica no longer has the binlog for GTID " in log
    assert "re-snapshot with fresh offsets" in log
    assert "a new snapshot" not in log


def reader_child(proc: ConnectorProcess) -> int:
    """The pid of the connector's binlog reader process (`python -m connector.binlog.process`)."""
    assert proc.proc is not None
    for task in Path(f"/proc/{proc.proc.pid}/task").iterdir():
        for pid in (task / "children").read_text().split():
            if b"connector.binlog.process" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return int(pid)
    raise AssertionError("no binlog reader process")


def test_when_needed_snapshots_again_when_the_binlog_is_purged_under_the_stream(
        purged_replica: SourcePair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """The reader frozen and its dump thread killed while the replica purges: its reconnect
    gets error 1236, and the connector stops cleanly and starts again with a snapshot."""
    pair, db = purged_replica, unique_name
    with three_rows_streamed(pair, broker, db, "when_needed", tmp_path) as (proc, doc):
        reader = reader_child(proc)
        os.kill(reader, signal.SIGSTOP)
        try:
            for (thread,) in pair.replica.execute(
                    "SELECT id FROM information_schema.processlist "
                    "WHERE command LIKE 'Binlog Dump%'"):
                pair.replica.execute(f"KILL {int(thread)}")
            pair.primary.execute(f"INSERT INTO {db}.t VALUES (4, 'away'), (5, 'away')")
            pair.primary.execute(f"UPDATE {db}.t SET v = 'changed' WHERE id = 2")
            pair.wait_synced()
            pair.replica.purge_older_binlogs()
            mark = len(proc.log())
        finally:
            os.kill(reader, signal.SIGCONT)
        proc.wait_log("a new snapshot of every captured table starts", timeout=60, after=mark)
        proc.wait_log(f"snapshot of {db}.t complete", timeout=120, after=mark)
        pair.primary.execute(f"INSERT INTO {db}.t VALUES (6, 'live')")
        wait_caught_up(pair, broker, doc, timeout=120)
        assert proc.stop() == 0
    log = proc.log()[mark:]
    assert "snapshot.mode=when_needed: the replica no longer has the binlog for GTID " in log
    assert "stopping to start again with a new snapshot" in log
    assert rebuild(broker.bootstrap, f"{db}.{db}.t")[0] == source_rows(pair, db, "t", ["id"])
