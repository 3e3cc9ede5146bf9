"""Migration from Debezium: gtidmark started on the offsets topic Debezium's own MySQL
connector wrote (same name and prefix) picks up where Debezium stopped: mid-stream from a
Kafka Connect worker's own offsets topic (gtidmark given its `offset.storage.topic`), and
mid-snapshot from the embedded engine's KafkaOffsetBackingStore on our broker. The rows come
from both: Debezium's records up to its stop, gtidmark's topics after; together they must
equal the primary."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connector.gtid import MariaDbGtidPos
from connector.kafka.partitioner import key_partition
from connector.offsets.store import read_committed
from connector.offsets.value import SNAPSHOT_KEY, written_by_gtidmark
from connector.settings.parse import parse_config
from tests.connect_services import ConnectWorker, DebeziumOnConnect
from tests.connector_tools import (
    QUICK_LEASE,
    SourcePair,
    connector_document,
    decode_row,
    source_rows,
    streaming_connector,
)
from tests.debezium_runner import (
    DEBEZIUM_SERVER_VERSION,
    KAFKA_OFFSETS,
    DebeziumProcess,
    mysql_properties,
)
from tests.integration.test_streaming import as_int64, committed_offsets
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.services import CDC_USER, REPL_PASSWORD, REPL_USER, MariaDb, MariaDbPair, wait_for
from tests.workload import TABLES, synced_workload

OFFSETS_PARTITIONS = 25  # Kafka Connect's default for its offsets topic
# Many more than Debezium reads between showing 300 rows and stopping (it read all of
# 3,000 once, on a quiet machine), so that it is always stopped mid-snapshot.
ROWS = 30_000


def apply(table: dict[str, dict[str, Any]], key: Any, value: Any) -> None:
    """One Debezium JSON (schemas enabled) change applied to a table keyed by its key JSON."""
    if value is None:
        return
    payload, schema = value["payload"], value["schema"]
    ident = json.dumps(key["payload"], sort_keys=True)
    if payload["op"] == "d":
        table.pop(ident, None)
        return
    after = next(f for f in schema["fields"] if f["field"] == "after")
    table[ident] = decode_row(after, payload["after"])


def debezium(pair: SourcePair, broker: Broker, doc: dict[str, Any], workdir: Path,
             **extra: str) -> DebeziumProcess:
    """Debezium's MySQL connector under gtidmark's name and prefix, its offsets in Kafka
    (not started); `extra` properties are named with `__` for dots."""
    return DebeziumProcess(mysql_properties(
        pair, doc["config"]["topic.prefix"], workdir, KAFKA_OFFSETS, **{
            "name": doc["name"],
            "database.include.list": doc["config"]["database.include.list"],
            "offset.storage.topic": f"{doc['config']['topic.prefix']}-offsets",
            "offset.storage.partitions": OFFSETS_PARTITIONS,
            "offset.storage.replication.factor": 1,
            "bootstrap.servers": broker.bootstrap,
            **{k.replace("__", "."): v for k, v in extra.items()},
        }), workdir)


def debezium_on_worker(worker: ConnectWorker, pair: SourcePair, doc: dict[str, Any],
                       workdir: Path, route: str = "dbz.", **extra: str) -> DebeziumOnConnect:
    """Debezium's MySQL connector on the worker under gtidmark's name and prefix (not
    started), its topics renamed by `route`; `extra` properties are named with `__` for
    dots."""
    db = doc["config"]["topic.prefix"]
    return DebeziumOnConnect(worker, mysql_properties(pair, db, workdir, **{
        "name": doc["name"], "database.include.list": doc["config"]["database.include.list"],
        **{k.replace("__", "."): v for k, v in extra.items()}}),
        lambda topic: topic.startswith(f"{db}."), route)


def worker_offsets(worker: ConnectWorker, doc: dict[str, Any]) -> dict[str, Any]:
    """The last offsets value of the connector's key in the worker's offsets topic."""
    key = json.dumps([doc["name"], {"server": doc["config"]["topic.prefix"]}],
                     separators=(",", ":"))
    values = [value for k, value in worker.offsets_records() if k == key]
    assert values and values[-1] is not None, values
    found: dict[str, Any] = json.loads(values[-1])
    return found


def create_snap(pair: MariaDbPair, db: str, rows: int, key_type: str = "INT") -> None:
    """`db`.snap with rows 1..`rows`, for Debezium to snapshot."""
    pair.primary.execute(f"CREATE DATABASE {db}")
    pair.primary.execute(f"CREATE TABLE {db}.snap (id {key_type} PRIMARY KEY, v VARCHAR(20))")
    pair.primary.execute(f"INSERT INTO {db}.snap SELECT seq, CONCAT('v', seq) "
                         f"FROM {db}.seq_1_to_{rows}")


def lost_rows(pair: SourcePair, broker: Broker, db: str,
              debezium_records: list[dict[str, Any]], debezium_first: bool = True) -> int:
    """Primary rows missing or different after Debezium's records then gtidmark's topics
    (or gtidmark's first, where Debezium took over from gtidmark)."""
    lost = 0
    for name, (_, key) in TABLES.items():
        topic = f"{db}.{db}.{name}"
        table: dict[str, dict[str, Any]] = {}
        theirs = [(r["key"], r["value"]) for r in debezium_records if r["topic"] == topic]
        ours = [(json.loads(m.key()), None if m.value() is None else json.loads(m.value()))
                for m in consume_all(broker.bootstrap, topic)]
        for record_key, value in theirs + ours if debezium_first else ours + theirs:
            apply(table, record_key, value)
        for ident, row in source_rows(pair, db, name, key).items():
            if name == "orders":
                row["flags"] = as_int64(row["flags"])
            got = table.get(ident)
            if got is None or any(got.get(c) != v for c, v in row.items()):
                lost += 1
    return lost


def test_gtidmark_resumes_from_debeziums_streaming_offsets(
        dbz_mariadb: MariaDbPair, broker: Broker, connect_worker: ConnectWorker,
        unique_name: str, tmp_path: Path) -> None:
    """Debezium on the Connect worker, stopped; then gtidmark started with the connector
    JSON the worker ran and the worker's bootstrap.servers and offset.storage.topic, as a
    Connect user migrates, writing on in Debezium's topics and schema history."""
    pair, db = dbz_mariadb, unique_name
    workload = synced_workload(pair, db, seed=53)
    dbz = debezium_on_worker(connect_worker, pair, {"name": f"{db}-connector", "config": {
        "topic.prefix": db, "database.include.list": db}}, tmp_path / "dbz", route="")
    dbz.start()
    try:
        workload.run(300, add_column_at=None)
        pair.wait_synced()
        dbz.wait_records(lambda _: lost_rows(pair, broker, db, []) == 0, 180,
                         "Debezium to stream the first changes")
    finally:
        assert dbz.stop() == 0
    doc = {"name": dbz.name, "config": {
        **dbz.connector_json, "bootstrap.servers": connect_worker.bootstrap,
        "offset.storage.topic": connect_worker.offsets_topic, **QUICK_LEASE}}
    key = json.dumps([doc["name"], {"server": db}], separators=(",", ":")).encode()
    written = [m for m in consume_all(broker.bootstrap, connect_worker.offsets_topic)
               if m.key() == key]
    assert {m.partition() for m in written} == {key_partition(key, OFFSETS_PARTITIONS)}
    raw = json.loads(written[-1].value())
    # Debezium's MySQL connector gets no GTIDs from MariaDB: file/pos only
    assert "gtids" not in raw and {"file", "pos", "server_id", "ts_sec"} <= raw.keys(), raw
    stored = read_committed(parse_config(doc))
    assert stored is not None and (stored.file, stored.pos) == (raw["file"], raw["pos"])
    history = len(consume_all(broker.bootstrap, dbz.history_topic))
    workload.run(600, add_column_at=None)  # while neither runs
    with streaming_connector(doc, tmp_path, timeout=120) as conn:
        workload.run(200, add_column_at=None)
        workload.close()
        pair.wait_synced()
        wait_for(lambda: lost_rows(pair, broker, db, []) == 0, 180,
                 "gtidmark to carry on where Debezium stopped", interval=1.0)
        assert conn.stop() == 0
    assert "offsets written by Debezium" in conn.log()
    assert len(consume_all(broker.bootstrap, dbz.history_topic)) == history  # no DDL since


class WritableReplica(MariaDb):
    """A replica Debezium can write its snapshot watermarks to (its own GTID domain).

    Debezium's MySQL connector needs a signal table it can write for incremental snapshots
    without MySQL GTIDs; the test's usual replicas are read-only.
    """

    def command(self) -> list[str]:
        args = [a for a in super().command() if a != "--read-only=ON"]
        return [*args, "--read-only=OFF", "--gtid-domain-id=7"]


@pytest.fixture
def writable_dbz_replica(mariadb: MariaDbPair) -> Iterator[MariaDbPair]:
    replica = WritableReplica("dbzwritable", mariadb.primary.base, server_id=4, replica=True,
                              version=DEBEZIUM_SERVER_VERSION)
    replica.start()
    pair = MariaDbPair(mariadb.primary, replica)
    try:
        replica.execute(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', "
                        f"MASTER_PORT={mariadb.primary.port}, MASTER_USER='{REPL_USER}', "
                        f"MASTER_PASSWORD='{REPL_PASSWORD}', MASTER_USE_GTID=slave_pos")
        replica.execute("START SLAVE")
        pair.wait_synced()
        yield pair
    finally:
        replica.stop()


def settle_local_writes(replica: MariaDb) -> None:
    """Make Debezium's watermark writes (domain 7) part of the replica's applied position.

    gtidmark's low watermark is `@@gtid_slave_pos`: a replica with local writes of its own
    would never look caught up. Read-only again, it is an ordinary replica from here on.
    """
    replica.execute("STOP SLAVE")
    replica.execute("SET GLOBAL read_only = ON")
    replica.execute("CHANGE MASTER TO IGNORE_DOMAIN_IDS = (7)")
    replica.execute("SET GLOBAL gtid_slave_pos = @@global.gtid_binlog_pos")
    replica.execute("START SLAVE")


def key_id(key: dict[str, Any]) -> int:
    return int(decode_row(key["schema"], key["payload"])["id"])


def snap_rows_lost(pair: SourcePair, broker: Broker, db: str,
                   debezium_records: list[dict[str, Any]]) -> int:
    """`lost_rows` for the snapshot test's table, keyed by its id's value (INT or DECIMAL)."""
    topic = f"{db}.{db}.snap"
    changes = [(r["key"], r["value"]) for r in debezium_records if r["topic"] == topic]
    changes += [(json.loads(m.key()), None if m.value() is None else json.loads(m.value()))
                for m in consume_all(broker.bootstrap, topic)]
    table: dict[int, Any] = {}
    for key, value in changes:
        if value is not None and value["payload"]["op"] == "d":
            table.pop(key_id(key), None)
        elif value is not None:
            table[key_id(key)] = value["payload"]["after"]["v"]
    rows = {int(row_id): v for row_id, v in pair.primary.execute(f"SELECT id, v FROM {db}.snap")}
    return sum(table.get(row_id) != v for row_id, v in rows.items()) + len(table.keys() - rows)


def snapshot_rows(records: list[dict[str, Any]], topic: str) -> list[int]:
    return [key_id(r["key"]) for r in records
            if r["topic"] == topic and r["value"] and r["value"]["payload"]["op"] == "r"]


@pytest.mark.parametrize("key_type", ["INT", "DECIMAL(20,0)"])
def test_gtidmark_continues_debeziums_incremental_snapshot(
        writable_dbz_replica: MariaDbPair, broker: Broker, unique_name: str,
        tmp_path: Path, key_type: str) -> None:
    """An INT chunk key is read back (resume after it); a DECIMAL one (a serialized
    BigDecimal) is not, and that table starts over: duplicates, no gap."""
    pair, db = writable_dbz_replica, unique_name
    p = pair.primary
    create_snap(pair, db, ROWS, key_type)
    p.execute(f"CREATE TABLE {db}.dbz_signal (id VARCHAR(42) PRIMARY KEY, "
              "type VARCHAR(32) NOT NULL, data VARCHAR(2048))")
    p.execute(f"GRANT INSERT, UPDATE, DELETE ON {db}.dbz_signal TO '{CDC_USER}'@'%'")
    pair.wait_synced()
    doc = connector_document(pair, broker, db)
    topic = f"{db}.{db}.snap"
    dbz = debezium(pair, broker, doc, tmp_path / "dbz",
                   signal__data__collection=f"{db}.dbz_signal",
                   incremental__snapshot__chunk__size="50")
    dbz.start()
    try:
        p.execute(f"INSERT INTO {db}.dbz_signal VALUES ('s1', 'execute-snapshot', "
                  f"'{{\"data-collections\": [\"{db}.snap\"], \"type\": \"incremental\"}}')")
        dbz.wait_records(lambda rs: len(snapshot_rows(rs, topic)) >= 300, 180,
                         "Debezium's snapshot to be under way")
    finally:
        stopped = dbz.stop()
    # Closed mid-snapshot, the engine's run() ends with an InterruptedException after a
    # clean stop (offsets committed); the runner reports that as exit 1.
    assert stopped == 0 or "InterruptedException" in dbz.log_path.read_text()
    assert "Engine state has changed from 'STOPPING' to 'STOPPED'" in dbz.engine_log()
    settle_local_writes(pair.replica)
    debezium_seen = snapshot_rows(dbz.records(), topic)
    assert len(set(debezium_seen)) < ROWS, "Debezium finished before it was stopped"
    stored = read_committed(parse_config(doc))
    assert stored is not None and stored.snapshot is not None
    assert not stored.snapshot.initial  # Debezium's incremental snapshot, continued
    p.execute(f"UPDATE {db}.snap SET v = 'changed' WHERE id % 97 = 0")  # while neither runs
    p.execute(f"DELETE FROM {db}.snap WHERE id % 89 = 0")
    with streaming_connector(doc, tmp_path, timeout=120) as conn:
        p.execute(f"INSERT INTO {db}.snap VALUES ({ROWS + 1}, 'late')")
        pair.wait_synced()
        wait_for(lambda: snap_rows_lost(pair, broker, db, dbz.records()) == 0, 240,
                 "gtidmark to finish Debezium's snapshot", interval=1.0)
        assert conn.stop() == 0
    ours = [key_id(json.loads(m.key())) for m in consume_all(broker.bootstrap, topic)
            if m.value() is not None and json.loads(m.value())["payload"]["op"] == "r"]
    if key_type == "INT":  # resumed after Debezium's last chunk, not from the table's start
        assert min(ours) > 50 and min(ours) <= max(debezium_seen) + 1
        assert "cannot be read" not in conn.log()
    else:
        assert min(ours) == 1
        assert conn.log().count(f"the snapshot position in {db}.snap cannot be read") == 1


def test_offsets_from_an_interrupted_debezium_initial_snapshot(
        dbz_mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """Debezium stopped during its initial snapshot: every table is snapshotted again."""
    pair, db = dbz_mariadb, unique_name
    create_snap(pair, db, 200_000)
    pair.wait_synced()
    doc = connector_document(pair, broker, db)
    topic = f"{db}.{db}.snap"
    dbz = debezium(pair, broker, doc, tmp_path / "dbz", snapshot__mode="initial")
    dbz.start(ready=None)
    try:
        dbz.wait_records(lambda rs: len(snapshot_rows(rs, topic)) >= 2000, 180,
                         "Debezium's initial snapshot to be under way")
    finally:  # killed: a clean stop mid-snapshot can hang the runner's engine thread
        assert dbz.proc is not None
        dbz.proc.kill()
        dbz.proc.wait(30)
    key = json.dumps([doc["name"], {"server": db}], separators=(",", ":")).encode()
    written = [json.loads(m.value()) for m in consume_all(broker.bootstrap, f"{db}-offsets")
               if m.key() == key]
    assert written[-1].get("snapshot") == "INITIAL", written[-1]  # what Debezium 3.6.3 writes
    assert len(set(snapshot_rows(dbz.records(), topic))) < 200_000
    pair.primary.execute(f"UPDATE {db}.snap SET v = 'changed' WHERE id % 97 = 0")
    target = MariaDbGtidPos.parse(pair.wait_synced())

    def snapshot_committed() -> bool:
        offsets = committed_offsets(broker, doc)
        return offsets is not None and written_by_gtidmark(offsets) \
            and not offsets.get(SNAPSHOT_KEY) \
            and MariaDbGtidPos.parse(offsets["gtids"]).covers(target)

    with streaming_connector(doc, tmp_path, timeout=120) as conn:
        # Comparing the 200,000 rows takes seconds: once, when the offsets say it is done.
        wait_for(snapshot_committed, 240, "gtidmark to commit the finished snapshot", 0.5)
        assert conn.stop() == 0
    assert snap_rows_lost(pair, broker, db, dbz.records()) == 0
    assert conn.log().count("Debezium's initial snapshot") == 1
