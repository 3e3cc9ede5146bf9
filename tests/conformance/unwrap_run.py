"""One more conformance run, MariaDB only: ExtractNewRecordState and converters keeping nulls.

Debezium 3.6.1 on the session's Kafka Connect worker and `gtidmark run` read the same
replica with the same transform settings:
`transforms=unwrap` in `rewrite-with-tombstone` mode with `add.fields` and `add.headers`
(prefix `h_`), the SMT's and the value converter's `replace.null.with.default` set to false
(the default run has them true), Kafka Connect's default header converter
(SimpleHeaderConverter: headers as text), heartbeats on. One Debezium connector.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conformance import scenarios
from tests.conformance.compare import Record
from tests.conformance.runs import in_run, kafka_records, run_sql
from tests.connect_services import ConnectWorker, DebeziumOnConnect
from tests.connector_tools import ConnectorProcess, SourcePair, connector_document
from tests.debezium_runner import mysql_properties
from tests.kafka_services import Broker
from tests.services import ServiceError

DB = "confuw"
HEADER_PREFIX = "h_"
SETTINGS = {
    "transforms": "unwrap",
    "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
    "transforms.unwrap.delete.tombstone.handling.mode": "rewrite-with-tombstone",
    "transforms.unwrap.add.fields": "op,table,source.ts_ms,db:database,source.file,total_order",
    "transforms.unwrap.add.headers": "op,source.ts_ms,db",
    "transforms.unwrap.add.headers.prefix": HEADER_PREFIX,
    "transforms.unwrap.replace.null.with.default": "false",
    "value.converter.replace.null.with.default": "false",
    "header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
    "heartbeat.interval.ms": "500",
    "skipped.operations": "none",  # the TRUNCATE below is a t record, which the SMT drops
}
STREAMING = [
    scenarios.NULL_DEFAULTS, *scenarios.NULL_DEFAULTS_ROWS,
    ("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(8,2), "
     "at DATETIME(3), flag BIT(1) DEFAULT b'1')"),
    ("INSERT INTO items VALUES (1, 'a', 1.50, '2024-01-02 03:04:05.678', b'0'), "
     "(2, 'b', NULL, NULL, NULL)"),
    "UPDATE items SET name = 'a2' WHERE id = 1",
    "DELETE FROM items WHERE id = 2",
    "ALTER TABLE items ADD COLUMN qty INT DEFAULT 3",  # the schema change passes unchanged
    "INSERT INTO items (id, name, qty) VALUES (3, 'c', NULL)",
    "TRUNCATE TABLE items",
    "INSERT INTO items (id, name) VALUES (5, 'e')",
    ["INSERT INTO items (id) VALUES (4)", "UPDATE items SET qty = 9 WHERE id = 4",
     "DELETE FROM items WHERE id = 4"],
    "CREATE TABLE nokey (a INT, b VARCHAR(5) DEFAULT 'd')",
    "INSERT INTO nokey VALUES (1, NULL)",
    "DELETE FROM nokey",
    *scenarios.DONE,
]


@dataclass
class UnwrapRun:
    db: str
    debezium: list[Record]
    ours: list[Record]


def _done(records: list[Record]) -> bool:
    return any(r["topic"] == f"{DB}.{DB}.done" for r in records)


def unwrap_run(pair: SourcePair, broker: Broker, worker: ConnectWorker, work: Path) -> UnwrapRun:
    pair.primary.execute(f"CREATE DATABASE {DB} CHARACTER SET utf8mb4")
    pair.wait_synced()
    # Connect applies a connector's value.converter.* only with its own value.converter.
    debezium_settings: dict[str, Any] = {
        **SETTINGS, "database.include.list": DB, "snapshot.mode": "no_data",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter"}
    dbz = DebeziumOnConnect(worker, mysql_properties(pair, DB, work / "debezium",
                                                     **debezium_settings),
                            lambda topic: in_run(DB, topic))
    ours = ConnectorProcess(connector_document(pair, broker, DB, **SETTINGS), work)
    try:
        dbz.start()
        ours.start()
        ours.wait_log("streaming from")
        run_sql(pair, DB, STREAMING)
        debezium = dbz.wait_records(_done, 120, "Debezium to see the last statement")
        deadline = time.monotonic() + 120
        while not _done(kafka_records(broker, DB)):
            assert ours.proc is not None
            if ours.proc.poll() is not None:
                raise AssertionError(f"gtidmark exited {ours.proc.returncode}: "
                                     f"{ours.log()[-3000:]}")
            if time.monotonic() > deadline:
                raise ServiceError("gtidmark did not send the last statement in 120s")
            time.sleep(0.5)
    finally:
        dbz.stop()
        if ours.proc is not None:
            ours.stop()
    return UnwrapRun(DB, debezium, kafka_records(broker, DB))
