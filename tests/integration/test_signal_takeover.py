"""A kill while acting on a signal does not drop it (#32): with the replica frozen, the
connector is SIGKILLed between the signal's in-progress mark and its snapshot plan; the next
start acts on the signal again and the snapshot runs, every row sent as a read."""

from __future__ import annotations

import json
import os
import signal as unix_signal
from pathlib import Path

from tests.connector_tools import ConnectorProcess, SourcePair, connector_document
from tests.integration.test_snapshot import make_table, signal
from tests.integration.test_streaming import committed_offsets
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.services import MariaDbPair, wait_for

ROWS = 20_000


def read_keys(broker: Broker, topic: str) -> set[int]:
    """The ids sent as snapshot reads (op=r) on `topic`."""
    keys: set[int] = set()
    for msg in consume_all(broker.bootstrap, topic):
        if msg.value() is None:
            continue
        doc = json.loads(msg.value())
        payload = doc.get("payload", doc)
        if payload["op"] == "r":
            keys.add(int(payload["after"]["id"]))
    return keys


def test_a_kill_while_acting_on_a_signal_with_the_replica_frozen_loses_no_row(
        source: SourcePair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    """Before: `offset 0 skipped: the last run ended while acting on it` and 0 rows sent."""
    db = unique_name
    make_table(source, db, ROWS)
    doc = connector_document(source, broker, db)
    proc = ConnectorProcess(doc, tmp_path)
    connector.append(proc)
    proc.start()
    proc.wait_log("binlog stream open")
    replica = source.replica.proc
    assert replica is not None
    os.kill(replica.pid, unix_signal.SIGSTOP)
    try:
        signal(proc, "execute-snapshot", tables=[f"{db}.big"])
        # The mark is committed before the plan's catalog session, which waits on the replica.
        wait_for(lambda: (committed_offsets(broker, doc) or {}).get("signal_in_progress") == 0,
                 60, "signal 0 marked in progress")
        proc.kill()
    finally:
        os.kill(replica.pid, unix_signal.SIGCONT)
    proc.start()
    proc.wait_log(f"snapshot of {db}.big complete", timeout=120)
    second_run = proc.log()[proc.log_offset:]
    assert "skipped" not in second_run, second_run
    assert "offset 0: the last run ended while acting on it (killed, crashed or taken " \
        "over); acting on it again, attempt 2 of 3" in second_run
    assert len([line for line in second_run.splitlines()
                if line.endswith(" finished") and "snapshot " in line]) == 1
    wait_for(lambda: len(read_keys(broker, f"{db}.{db}.big")) == ROWS, 60,
             f"{ROWS} read records")
    assert read_keys(broker, f"{db}.{db}.big") == set(range(1, ROWS + 1))
    committed = committed_offsets(broker, doc) or {}
    assert committed.get("signal_offset") == 1 and "signal_in_progress" not in committed


def test_a_replica_away_while_planning_a_snapshot_delays_the_signal_and_drops_nothing(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    """Before: `signal at offset 0 (execute-snapshot) skipped: the replica refused a query
    (error 2013 ...)` and the snapshot never ran. Now it is acted on once the replica answers."""
    db = unique_name
    make_table(mariadb, db, 1_000)
    doc = connector_document(mariadb, broker, db)
    proc = ConnectorProcess(doc, tmp_path)
    connector.append(proc)
    proc.start()
    proc.wait_log("binlog stream open")
    replica = mariadb.replica.proc
    assert replica is not None
    os.kill(replica.pid, unix_signal.SIGSTOP)
    try:
        signal(proc, "execute-snapshot", tables=[f"{db}.big"])
        # Two connects of 10 s each time out, then the signal waits for its next attempt.
        proc.wait_log("not acted on yet, trying again in 1s (the signals after it wait)")
        assert "signal at offset 0 (execute-snapshot): the replica refused a query (error " \
            "2013" in proc.log()
    finally:
        os.kill(replica.pid, unix_signal.SIGCONT)
    proc.wait_log(f"snapshot of {db}.big complete", timeout=120)
    assert "skipped" not in proc.log()[proc.log_offset:]
    wait_for(lambda: len(read_keys(broker, f"{db}.{db}.big")) == 1_000, 60,
             "1000 read records")
    wait_for(lambda: (committed_offsets(broker, doc) or {}).get("signal_offset") == 1, 30,
             "signal 0 committed")
