"""Transactions outside the plain BEGIN..COMMIT: two-phase XA, and very large ones."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from connector.gtid import MariaDbGtidPos
from tests.connector_tools import (
    ConnectorProcess,
    SourcePair,
    connector_document,
    rebuild,
    streaming_connector,
)
from tests.integration.test_resilience import (
    assert_same,
    binlog_dump_threads,
    running,
    running_on,
)
from tests.integration.test_streaming import committed_offsets, wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, high_watermark
from tests.services import MariaDbPair, wait_for

__all__ = ["running", "running_on"]  # the fixtures

PIECE_ROWS = "2000"


def ids(broker: Broker, db: str) -> list[int]:
    rebuilt, _ = rebuild(broker.bootstrap, f"{db}.{db}.t")
    return sorted(r["id"] for r in rebuilt.values())


def execute_each(connection: Any, statements: Iterable[str]) -> None:
    """Statements in order on one session: an XA transaction lives in the session."""
    with connection.cursor() as cur:
        for statement in statements:
            cur.execute(statement)


def test_two_phase_xa_is_emitted_at_commit_and_dropped_at_rollback(
        source: SourcePair, broker: Broker,
        running_on: tuple[str, ConnectorProcess, dict[str, Any]]) -> None:
    db, _, doc = running_on
    conn = source.primary.root(db)
    execute_each(conn, ("XA START 'a'", "INSERT INTO t VALUES (1, 'a1'), (2, 'a2')",
                        "XA END 'a'", "XA PREPARE 'a'", "XA COMMIT 'a'",
                        "XA START 'b'", "INSERT INTO t VALUES (3, 'b')", "XA END 'b'",
                        "XA PREPARE 'b'", "XA ROLLBACK 'b'",
                        "XA START 'c'", "INSERT INTO t VALUES (4, 'c')",
                        "UPDATE t SET v = 'c1' WHERE id = 1", "XA END 'c'",
                        "XA COMMIT 'c' ONE PHASE"))
    conn.close()
    wait_caught_up(source, broker, doc)
    assert ids(broker, db) == [1, 2, 4]
    assert_same(source, broker, db)


def test_restart_between_xa_prepare_and_commit_loses_nothing(
        source: SourcePair, broker: Broker,
        running_on: tuple[str, ConnectorProcess, dict[str, Any]]) -> None:
    db, proc, doc = running_on
    xa = source.primary.root(db)
    execute_each(xa, ("XA START 'd'", "INSERT INTO t VALUES (10, 'd'), (11, 'd')",
                      "XA END 'd'", "XA PREPARE 'd'"))
    source.primary.execute(f"INSERT INTO {db}.t VALUES (20, 'after prepare')")
    source.wait_synced()
    wait_for(lambda: ids(broker, db) == [20], 60, "the row written after the prepare")
    assert proc.stop() == 0  # a clean stop commits the offsets of everything emitted
    execute_each(xa, ["XA COMMIT 'd'"])
    xa.close()
    source.primary.execute(f"INSERT INTO {db}.t VALUES (30, 'after commit')")
    proc.start()
    proc.wait_log("resuming from committed offsets")
    wait_caught_up(source, broker, doc)
    assert ids(broker, db) == [10, 11, 20, 30]
    assert_same(source, broker, db)


@pytest.fixture
def wide_table(mariadb: MariaDbPair, unique_name: str) -> str:
    mariadb.primary.execute(f"CREATE DATABASE {unique_name}")
    mariadb.primary.execute(f"CREATE TABLE {unique_name}.t (id INT PRIMARY KEY, v TEXT)")
    mariadb.wait_synced()
    return unique_name


@contextmanager
def streaming(mariadb: MariaDbPair, broker: Broker, db: str, tmp_path: Path,
              monkeypatch: pytest.MonkeyPatch, piece_rows: str = PIECE_ROWS,
              **settings: Any) -> Iterator[tuple[ConnectorProcess, dict[str, Any]]]:
    """The connector with its binlog stream open, transactions emitted in pieces of
    `piece_rows` rows; killed on the way out if it still runs."""
    monkeypatch.setenv("GTIDMARK_PIECE_ROWS", piece_rows)
    doc = connector_document(mariadb, broker, db, **settings)
    with streaming_connector(doc, tmp_path) as proc:
        yield proc, doc


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def one_transaction(mariadb: MariaDbPair, db: str, rows: int, width: int,
                    first_id: int = 1) -> None:
    mariadb.primary.execute(f"INSERT INTO {db}.t SELECT seq + {first_id - 1}, REPEAT(CHAR(65 + seq % 26), {width}) "
                            f"FROM {db}.seq_1_to_{rows}")


def test_large_transaction_arrives_whole_with_bounded_memory(
        mariadb: MariaDbPair, broker: Broker, wide_table: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    db = wide_table
    with streaming(mariadb, broker, db, tmp_path, monkeypatch) as (proc, doc):
        assert proc.proc is not None
        one_transaction(mariadb, db, 1000, 1000, 200_001)  # warm-up: topic, encoder, producer buffers
        wait_caught_up(mariadb, broker, doc)
        before = peak_rss_mb(proc.proc.pid)
        one_transaction(mariadb, db, 100_000, 1000)  # ~100 MB of row data in one transaction
        wait_caught_up(mariadb, broker, doc)
        growth = peak_rss_mb(proc.proc.pid) - before
    print(f"peak RSS growth of the connector process: {growth:.0f} MB")
    assert growth < 120, f"peak RSS grew by {growth:.0f} MB for a ~100 MB transaction"
    assert len(ids(broker, db)) == 101_000


def test_sigkill_while_a_large_transaction_is_emitted_loses_nothing(
        mariadb: MariaDbPair, broker: Broker, wide_table: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    db = wide_table
    with streaming(mariadb, broker, db, tmp_path, monkeypatch) as (proc, doc):
        mariadb.primary.execute(f"INSERT INTO {db}.t VALUES (0, 'before')")
        wait_caught_up(mariadb, broker, doc)
        one_transaction(mariadb, db, 60_000, 100)
        big = MariaDbGtidPos.parse(mariadb.primary.gtid_binlog_pos())
        wait_for(lambda: high_watermark(broker.bootstrap, f"{db}.{db}.t") > 1, 120,
                 "the first piece of the transaction in the topic", 0.1)
        proc.kill()
    offsets = committed_offsets(broker, doc)
    assert offsets is not None
    assert not MariaDbGtidPos.parse(offsets["gtids"]).covers(big), "killed after the end"
    emitted = len(ids(broker, db))
    assert 1 < emitted < 60_001, emitted
    proc.start()
    wait_caught_up(mariadb, broker, doc)
    proc.stop()
    assert_same(mariadb, broker, db)


def test_reconnect_in_the_middle_of_a_large_transaction_repeats_nothing(
        mariadb: MariaDbPair, broker: Broker, wide_table: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    db = wide_table
    with streaming(mariadb, broker, db, tmp_path, monkeypatch) as (proc, doc):
        one_transaction(mariadb, db, 60_000, 100)
        big = MariaDbGtidPos.parse(mariadb.wait_synced())
        wait_for(lambda: high_watermark(broker.bootstrap, f"{db}.{db}.t") > 0, 120,
                 "the first piece of the transaction in the topic", 0.1)
        offsets = committed_offsets(broker, doc)
        assert offsets is None or not MariaDbGtidPos.parse(offsets["gtids"]).covers(big)
        for thread in binlog_dump_threads(mariadb):
            mariadb.replica.execute(f"KILL {thread}")
        proc.wait_log("reconnecting from GTID")
        wait_caught_up(mariadb, broker, doc)
    creates = [m for m in consume_all(broker.bootstrap, f"{db}.{db}.t") if m.value() is not None]
    assert len(creates) == 60_000
    assert_same(mariadb, broker, db)


def test_snapshot_while_large_transactions_stream_in_pieces(
        mariadb: MariaDbPair, broker: Broker, wide_table: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    db = wide_table
    one_transaction(mariadb, db, 20_000, 10)
    mariadb.wait_synced()
    with streaming(mariadb, broker, db, tmp_path, monkeypatch, "500", snapshot__mode="initial",
                   incremental__snapshot__chunk__size="700") as (proc, doc):
        for n in range(4):  # each UPDATE is one transaction of 20,000 row changes
            mariadb.primary.execute(f"UPDATE {db}.t SET v = CONCAT(v, '{n}')")
        proc.wait_log(f"snapshot of {db}.t complete", timeout=240)
        wait_caught_up(mariadb, broker, doc)
    assert_same(mariadb, broker, db)
