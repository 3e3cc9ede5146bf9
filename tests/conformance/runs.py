"""One conformance run per server flavour: Debezium 3.6.1 on a Kafka Connect 4.4 worker and
`gtidmark run` side by side, both producing to the suite's broker and read back from it.

MariaDB: a replica reporting MySQL 5.7.19 (`dbz_mariadb`); Debezium reads the snapshot
tables with its blocking initial snapshot (its incremental one cannot run there: README
"Events"), gtidmark with execute-snapshot. MySQL: the session's MySQL 9.7 replica as it is;
both read the snapshot tables with their read-only incremental snapshots, started by the
same `execute-snapshot` messages on the one Kafka signal topic both listen to (the key is
the shared `topic.prefix`), Debezium's windows moved on by transactions on a database
neither captures (`_debezium_snapshot`). Then the scripted statements stream through both.
One Debezium start per flavour and converter (CONVERTERS: the worker's JsonConverter with
schemas, or without them set on both connectors), on the session's one worker
(tests/connect_services.py).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from connector.settings.parse import parse_config
from signals.send import build_signal, send_signal
from tests.conformance import mysql_scenarios, scenarios
from tests.conformance.compare import Record
from tests.connect_services import ConnectWorker, DebeziumOnConnect
from tests.connector_tools import ConnectorProcess, SourcePair, connector_document
from tests.debezium_runner import mysql_properties
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, create_topic, json_records, list_topics
from tests.services import ServiceError

# skipped.operations none: TRUNCATE TABLE (scenarios.STREAMING) is sent as an op=t record.
SETTINGS = {"provide.transaction.metadata": "true", "heartbeat.interval.ms": "500",
            "skipped.operations": "none"}
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
# The converters of a run: the worker's (JsonConverter with schemas), or JsonConverter
# without schemas for keys and values, set on the connector as Connect users override them.
CONVERTERS: dict[str, dict[str, str]] = {
    "json": {},
    "schemaless": {"key.converter": JSON_CONVERTER, "key.converter.schemas.enable": "false",
                   "value.converter": JSON_CONVERTER,
                   "value.converter.schemas.enable": "false"},
}


@dataclass(frozen=True)
class Target:
    """What one flavour's run does: database (= topic prefix), statements, snapshots."""

    flavour: str
    db: str
    setup: list[Any]
    streaming: list[Any]
    # execute-snapshot signals in order: (tables, surrogate key)
    snapshots: list[tuple[list[str], str | None]]
    debezium: dict[str, str] = field(default_factory=dict)
    both: dict[str, str] = field(default_factory=dict)  # given to Debezium and gtidmark alike
    converter: str = "json"  # a key of CONVERTERS


def target(flavour: str, broker: Broker, converter: str = "json") -> Target:
    """`converter` (CONVERTERS) given to both; a run of its own database and topics."""
    own = {"mariadb": "confsl", "mysql": "confslmy"}[flavour] if converter == "schemaless" \
        else None
    t = _target(flavour, broker, own)
    return replace(t, converter=converter, both={**t.both, **CONVERTERS[converter]})


def _target(flavour: str, broker: Broker, db: str | None) -> Target:
    snapshots: list[tuple[list[str], str | None]] = [(["snap", "snap_all", "snap_nd"], None),
                                                     (["snap_sk"], "code")]
    if flavour == "mariadb":
        return Target("mariadb", db or "conf", scenarios.SNAPSHOT_SETUP,
                      [*scenarios.STREAMING, *scenarios.DONE], snapshots,
                      {"snapshot.mode": "initial"})
    db = db or "confmy"
    return Target(
        "mysql", db,
        [*map(mysql_scenarios.for_mysql, scenarios.SNAPSHOT_SETUP),
         *mysql_scenarios.SNAPSHOT_SETUP],
        [*map(mysql_scenarios.for_mysql, scenarios.STREAMING), *mysql_scenarios.STREAMING,
         *scenarios.DONE],
        [*snapshots, (mysql_scenarios.SNAPSHOT_TABLES, None)],
        {"snapshot.mode": "no_data", "read.only": "true",
         "signal.enabled.channels": "kafka", "signal.kafka.topic": f"{db}-signal",
         "signal.kafka.bootstrap.servers": broker.bootstrap,
         "signal.kafka.groupId": f"{db}-debezium-signals",
         "signal.consumer.allow.auto.create.topics": "false",
         "signal.poll.interval.ms": "200"})  # signals read every 200 ms (5 s by default)


@dataclass
class Run:
    db: str
    flavour: str
    debezium: list[Record]
    ours: list[Record]
    debezium_history: list[dict[str, Any]]
    ours_history: list[dict[str, Any]]
    converter: str = "json"
    # The records as Kafka holds them; `debezium`/`ours` have each schemaless key and value
    # put in an envelope of its own ({"payload": ...}) for the comparisons.
    debezium_raw: list[Record] = field(default_factory=list)
    ours_raw: list[Record] = field(default_factory=list)


def payload(doc: Any) -> Any:
    """A JSON key or value's payload, with schemas (an envelope) or without."""
    if isinstance(doc, dict) and set(doc) == {"schema", "payload"}:
        return doc["payload"]
    return doc


def enveloped(records: list[Record]) -> list[Record]:
    """Schemaless records in the shape compare.py reads: {"payload": ...}, nulls kept."""
    return [{**r, **{part: None if r[part] is None else {"payload": r[part]}
                     for part in ("key", "value")}} for r in records]


def run_sql(pair: SourcePair, db: str, statements: list[Any]) -> None:
    """Each statement in autocommit; a list is one transaction."""
    conn = pair.primary.root(db, charset="utf8mb4")
    try:
        with conn.cursor() as cur:
            for statement in statements:
                if isinstance(statement, list):
                    cur.execute("BEGIN")
                    for part in statement:
                        cur.execute(part)
                    cur.execute("COMMIT")
                else:
                    cur.execute(statement)
    finally:
        conn.close()


def in_run(db: str, topic: str) -> bool:
    """The run's topics: schema changes, change topics, transactions, heartbeats."""
    return topic in (db, f"__debezium-heartbeat.{db}") or topic.startswith(f"{db}.")


def kafka_records(broker: Broker, db: str) -> list[Record]:
    return json_records(broker.bootstrap, sorted(t for t in list_topics(broker.bootstrap)
                                                 if in_run(db, t)))


def has_done(db: str, records: list[Record]) -> bool:
    """The last statement's row and its transaction's END (a later batch may carry it)."""
    done = [r for r in records if r["topic"] == f"{db}.{db}.done"]
    if not done:
        return False
    tx = payload(done[-1]["value"])["transaction"]["id"]
    return any(r["topic"] == f"{db}.transaction" and payload(r["value"])["status"] == "END"
               and payload(r["value"])["id"] == tx for r in records)


def _row_count(pair: SourcePair, db: str, table: str) -> int:
    return int(pair.primary.execute(f"SELECT COUNT(*) FROM `{db}`.`{table}`")[0][0])


def _reads(records: list[Record], topic: str) -> int:
    return sum(1 for r in records if r["topic"] == topic and r["value"] is not None
               and payload(r["value"]).get("op") == "r")


TICK = "tick"  # a database neither connector captures


def _debezium_snapshot(dbz: DebeziumOnConnect, pair: SourcePair, db: str, tables: list[str],
                       started: int) -> None:
    """Debezium's read-only incremental snapshot of `tables`, to its last `r` record.

    Its signal thread reads the first chunk; each window then closes when the stream shows
    a GTID past its high watermark, and the next chunk is read on the stream's thread. A
    binlog event the stream handles while the signal thread is in its chunk races it
    (measured: "highWatermark is null" there, then a row read with another table's
    columns, and the connector stops): so the replica stays idle (server heartbeats at the
    default 48 s) until that first chunk is read, then transactions on a database neither
    connector captures move the windows on."""
    dbz.wait_log("Incremental snapshot for table", 60, count=started + 1)
    time.sleep(1.0)  # the first chunk: one SELECT and two SHOW BINARY LOG STATUS
    rows = {f"{db}.{db}.{name}": _row_count(pair, db, name) for name in tables}
    deadline = time.monotonic() + 120
    while True:
        records = dbz.records(rows)
        if all(_reads(records, topic) >= n for topic, n in rows.items()):
            return
        if time.monotonic() > deadline:
            raise ServiceError(f"Debezium's snapshot of {tables} did not finish in 120s")
        pair.primary.execute(f"REPLACE INTO {TICK}.tick VALUES (1, NOW(6))")
        time.sleep(0.2)


def _wait_ours(ours: ConnectorProcess, broker: Broker, db: str, timeout: float) -> None:
    """Until gtidmark sent the last statement; at once if it exited meanwhile."""
    deadline = time.monotonic() + timeout
    while not has_done(db, kafka_records(broker, db)):
        assert ours.proc is not None
        if ours.proc.poll() is not None:
            raise AssertionError(f"gtidmark exited {ours.proc.returncode}: {ours.log()[-3000:]}")
        if time.monotonic() > deadline:
            raise ServiceError(f"gtidmark did not send the last statement in {timeout:.0f}s")
        time.sleep(0.5)


def conformance_run(pair: SourcePair, broker: Broker, worker: ConnectWorker, work: Path,
                    t: Target) -> Run:
    db = t.db
    pair.primary.execute(f"CREATE DATABASE {db} CHARACTER SET utf8mb4")
    pair.primary.execute(f"CREATE DATABASE IF NOT EXISTS {TICK}")
    pair.primary.execute(f"CREATE TABLE IF NOT EXISTS {TICK}.tick (id INT PRIMARY KEY, "
                         "at DATETIME(6))")
    run_sql(pair, db, t.setup)
    pair.wait_synced()
    dbz = DebeziumOnConnect(worker, mysql_properties(
        pair, db, work / "debezium", **{"database.include.list": db, **SETTINGS, **t.both,
                                        **t.debezium}), lambda topic: in_run(db, topic))
    # Any connector.class works: the flavour comes from the server.
    doc = connector_document(pair, broker, db, **{
        "connector.class": "io.debezium.connector.mysql.MySqlConnector", **SETTINGS, **t.both})
    config = parse_config(doc)
    create_topic(broker.bootstrap, config.signal_kafka_topic, partitions=1)
    ours = ConnectorProcess(doc, work)
    incremental = t.debezium.get("read.only") == "true"
    try:
        dbz.start()
        ours.start()
        ours.wait_log("streaming from")
        started = 0  # tables whose incremental snapshot Debezium has begun
        for tables, surrogate in t.snapshots:
            send_signal(config, build_signal("execute-snapshot", surrogate_key=surrogate,
                                             tables=[f"{db}.{name}" for name in tables]))
            for name in tables:
                ours.wait_log(f"snapshot of {db}.{name} complete", timeout=120)
            if incremental:
                _debezium_snapshot(dbz, pair, db, tables, started)
                started += len(tables)
        run_sql(pair, db, t.streaming)
        dbz.wait_records(lambda rs: has_done(db, rs), 180, "Debezium to see the last statement",
                         only=(f"{db}.{db}.done", f"{db}.transaction"))
        debezium = dbz.records()
        _wait_ours(ours, broker, db, 180)
    finally:
        dbz.stop()
        if ours.proc is not None:
            ours.stop()
    raw = kafka_records(broker, db)
    (work / "ours.jsonl").write_text("".join(json.dumps(r) + "\n" for r in raw))
    compared = enveloped if t.converter == "schemaless" else list
    return Run(db, t.flavour, compared(debezium), compared(raw), dbz.history(),
               [json.loads(m.value()) for m in consume_all(broker.bootstrap,
                                                           f"{db}-schema-history")],
               t.converter, debezium, raw)
