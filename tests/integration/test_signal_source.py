"""The source signal channel (#32), read-only: a row INSERTed into the signal table on the
primary reaches the replica's binlog and gtidmark acts on it as on the same signal from the
signal topic; never again after a restart past it, and again after a kill while acting on
it; a malformed row is one warning and streaming goes on."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.connector_tools import ConnectorProcess, SourcePair, connector_document
from tests.integration.test_signal_attacks import reads
from tests.integration.test_signal_crashes import CATALOG_READ
from tests.integration.test_snapshot import make_table, proc_doc, signal, start
from tests.integration.test_streaming import committed_offsets, wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, list_topics
from tests.services import MariaDbPair, wait_for
from tests.tcp_proxy import TcpProxy

pytestmark = pytest.mark.integration

ROWS = 3000
SIGNAL_TABLE = "debezium_signal"
READ_TIMEOUT_ENV = "GTIDMARK_SNAPSHOT_READ_TIMEOUT"  # the snapshot sessions' read timeout


def signal_table(pair: SourcePair, db: str) -> str:
    """Debezium's signal table, on the primary; its name as signal.data.collection wants it."""
    pair.primary.execute(f"CREATE TABLE {db}.{SIGNAL_TABLE} (id VARCHAR(42) PRIMARY KEY, "
                         "type VARCHAR(32) NOT NULL, data VARCHAR(2048) NULL)")
    return f"{db}.{SIGNAL_TABLE}"


def insert_signal(pair: SourcePair, db: str, signal_id: str, kind: str,
                  data: str | None) -> None:
    value = "NULL" if data is None else "'" + data.replace("'", "''") + "'"
    pair.primary.execute(f"INSERT INTO {db}.{SIGNAL_TABLE} VALUES ('{signal_id}', '{kind}', "
                         f"{value})")


def execute_snapshot(db: str, table: str) -> str:
    return json.dumps({"data-collections": [f"{db}.{table}"], "type": "incremental"})


def lines(proc: ConnectorProcess, pattern: str) -> list[str]:
    return [line for line in proc.log().splitlines() if re.search(pattern, line)]


def all_read(broker: Broker, topic: str) -> None:
    """"complete" is logged as the last chunk is sent: wait for its delivery (a new topic's
    partitions may take a moment to take records)."""
    wait_for(lambda: reads(broker, topic) == ROWS, 60, f"{ROWS} read records on {topic}")


def settings(table: str, channels: str = "source,kafka") -> dict[str, Any]:
    return {"signal__enabled__channels": channels, "signal__data__collection": table}


def test_a_row_inserted_on_the_primary_snapshots_the_table_once_with_kafka_alongside(
        source: SourcePair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    db = unique_name
    make_table(source, db, ROWS, "t")
    table = signal_table(source, db)
    proc = start(source, broker, db, tmp_path, connector, **settings(table))
    insert_signal(source, db, "bad-json", "execute-snapshot", "{not json")
    insert_signal(source, db, "bad-type", "explode", "{}")
    insert_signal(source, db, "ad-hoc-1", "execute-snapshot", execute_snapshot(db, "t"))
    proc.wait_log(f"snapshot of {db}.t complete", timeout=120)
    signal(proc, "log", message="through the topic")  # the kafka channel reads too
    proc.wait_log("signal log: through the topic")
    all_read(broker, f"{db}.{db}.t")
    skipped = lines(proc, rf"signal from {table} \(GTID \S+, row 0, id 'bad-\w+'\) skipped: ")
    assert len(skipped) == 2, skipped
    assert "id 'bad-json') skipped: data is not JSON (" in skipped[0]
    assert "id 'bad-type') skipped: unknown type 'explode' (known: " in skipped[1]
    acted_on = (rf"signal from {table} \(GTID \S+, row 0, id 'ad-hoc-1'\) "
                r"\(execute-snapshot\): snapshot ad-hoc-1: ")
    assert len(lines(proc, acted_on)) == 1, lines(proc, acted_on)
    # The signal table is in database.include.list: its rows are change events, as Debezium's.
    ids = [json.loads(m.value())["payload"]["after"]["id"]
           for m in consume_all(broker.bootstrap, f"{db}.{db}.{SIGNAL_TABLE}")
           if m.value() is not None]
    assert ids == ["bad-json", "bad-type", "ad-hoc-1"]
    wait_caught_up(source, broker, proc_doc(proc), timeout=60)
    assert proc.stop() == 0

    proc.start()  # from offsets past the signal: not acted on again
    proc.wait_log("binlog stream open")
    insert_signal(source, db, "after-restart", "log", json.dumps({"message": "second start"}))
    proc.wait_log("signal log: second start")
    assert len(lines(proc, acted_on)) == 1, lines(proc, acted_on)
    assert lines(proc, r"id 'bad-") == skipped
    assert reads(broker, f"{db}.{db}.t") == ROWS


def test_a_kill_while_acting_on_a_signal_row_acts_on_it_after_the_restart(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess], monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed between the row's in-progress mark and the end of its action (the snapshot
    plan's catalog read held by the replica's connection, frozen as the query goes out).
    The restart's catalog reads time out (2 s) while still frozen: the signal waits, the
    stream held at its transaction, and is acted on once the replica answers. The signal
    table is not captured (table.include.list), so its rows are no events."""
    db = unique_name
    make_table(mariadb, db, ROWS, "t")
    table = signal_table(mariadb, db)
    proxy = TcpProxy(mariadb.replica.port)
    try:
        doc = connector_document(mariadb, broker, db, database__port=str(proxy.port),
                                 table__include__list=f"{db}\\.t", **settings(table, "source"))
        proc = ConnectorProcess(doc, tmp_path)
        connector.append(proc)
        monkeypatch.delenv(READ_TIMEOUT_ENV, raising=False)
        proc.start()
        proc.wait_log("streaming from")
        proxy.freeze_on(CATALOG_READ)
        insert_signal(mariadb, db, "killed-1", "execute-snapshot", execute_snapshot(db, "t"))
        wait_for(lambda: (committed_offsets(broker, doc) or {}).get(
            "signal_source_attempt") == 1, 60, "the signal row marked in progress")
        proc.kill()
        monkeypatch.setenv(READ_TIMEOUT_ENV, "2")
        proc.start()
        proc.wait_log("not acted on yet, trying again in 1s (the stream waits at its "
                      "transaction)")
        proxy.freeze_on(None)
        proc.wait_log(f"snapshot of {db}.t complete", timeout=120)
    finally:
        proxy.close()
    again = lines(proc, rf"signal from {table} \(GTID \S+, row 0, id 'killed-1'\): the last run ended while "
                        r"acting on it \(killed, crashed or taken over\); acting on it again, "
                        r"attempt 2 of 3")
    assert len(again) == 1, again
    assert "skipped" not in proc.log()[proc.log_offset:]
    all_read(broker, f"{db}.{db}.t")
    wait_caught_up(mariadb, broker, doc, timeout=60)
    assert "signal_source_gtid" not in (committed_offsets(broker, doc) or {})
    assert f"{db}.{db}.{SIGNAL_TABLE}" not in list_topics(broker.bootstrap)
