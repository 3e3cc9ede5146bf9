"""Offsets both ways between Debezium's MySQL connector on a Kafka Connect worker and
gtidmark, on a real MySQL replica, through the worker's own offsets topic.

Debezium's MySQL connector keeps the replica's executed GTID set in its offsets (`gtids`);
gtidmark, given the worker's `offset.storage.topic` (as a Connect user copies it from
connect-distributed.properties), reads and writes the same key with the same set there, so
each takes over where the other stopped; in the middle of Debezium's snapshots too (its
read-only incremental one continues after its last chunk, an interrupted initial one is
taken again). Debezium's records go to `dbz.`-prefixed topics (tests/connect_services.py),
gtidmark's to the usual ones; together they must equal the primary.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from connector.flavours import MYSQL
from connector.offsets.store import read_committed
from connector.offsets.value import SNAPSHOT_KEY, written_by_gtidmark
from connector.settings.parse import parse_config
from tests.connect_services import ConnectWorker
from tests.connector_tools import (
    QUICK_LEASE,
    ConnectorProcess,
    connector_document,
    streaming_connector,
)
from tests.integration.test_debezium_migration import (
    debezium_on_worker,
    key_id,
    lost_rows,
    snap_rows_lost,
    snapshot_rows,
    worker_offsets,
)
from tests.integration.test_streaming import committed_offsets, wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, create_topic, json_records, produce
from tests.mysql_services import MySqlPair
from tests.services import wait_for
from tests.workload import TABLES, insert_sequence, synced_workload

SNAP_ROWS = 60_000  # 1,200 chunks of 50: Debezium, stopped after 300 rows, cannot reach the
# end meanwhile (with 3,000 it once did: its windows also close on other transactions)


def assert_none_repeated(records: list[dict[str, Any]], db: str, handed_over: str) -> None:
    """The records that came after a hand-over hold no transaction of its GTID set."""
    position = MYSQL.position(handed_over)
    gtids = [r["value"]["payload"]["source"]["gtid"] for r in records
             if r["value"] is not None and r["topic"].startswith(f"{db}.{db}.")]
    assert gtids and not [g for g in gtids if position.contains(g)]


def test_gtidmark_resumes_from_debeziums_mysql_gtid_set(
        mysql: MySqlPair, broker: Broker, connect_worker: ConnectWorker, unique_name: str,
        tmp_path: Path) -> None:
    db = unique_name
    workload = synced_workload(mysql, db, seed=61)
    doc = connector_document(mysql, broker, db,
                             offset__storage__topic=connect_worker.offsets_topic)
    dbz = debezium_on_worker(connect_worker, mysql, doc, tmp_path / "dbz")
    dbz.start()
    try:
        workload.run(300, add_column_at=None)
        mysql.wait_synced()
        dbz.wait_records(lambda rs: lost_rows(mysql, broker, db, rs) == 0,
                         180, "Debezium to stream the first changes")
    finally:
        assert dbz.stop() == 0
    raw = worker_offsets(connect_worker, doc)
    assert raw.get("gtids"), raw  # Debezium's MySQL connector on MySQL: a GTID set
    stored = read_committed(parse_config(doc))
    assert stored is not None
    assert MYSQL.position(stored.gtids) == MYSQL.position(raw["gtids"])
    workload.run(600, add_column_at=None)  # while neither runs
    with streaming_connector(doc, tmp_path, timeout=120) as conn:
        workload.run(200, add_column_at=None)
        workload.close()
        mysql.wait_synced()
        wait_for(lambda: lost_rows(mysql, broker, db, dbz.records()) == 0,
                 180, "gtidmark to carry on where Debezium stopped", interval=1.0)
        assert conn.stop() == 0
    assert "offsets written by Debezium" in conn.log()
    ours = json_records(broker.bootstrap, [f"{db}.{db}.{name}" for name in TABLES])
    assert_none_repeated(ours, db, raw["gtids"])


def test_debezium_resumes_from_gtidmarks_mysql_offsets(
        mysql: MySqlPair, broker: Broker, connect_worker: ConnectWorker, unique_name: str,
        tmp_path: Path) -> None:
    db = unique_name
    workload = synced_workload(mysql, db, seed=67)
    doc = connector_document(mysql, broker, db,
                             offset__storage__topic=connect_worker.offsets_topic)
    with streaming_connector(doc, tmp_path) as conn:
        workload.run(400, add_column_at=None)
        wait_caught_up(mysql, broker, doc)
        assert conn.stop() == 0
    ours = committed_offsets(broker, doc)
    assert ours is not None and MYSQL.position(ours["gtids"])
    assert worker_offsets(connect_worker, doc)["gtids"] == ours["gtids"]  # the worker's topic
    workload.run(500, add_column_at=None)  # while neither runs
    # Debezium has no schema history of its own here: snapshot.mode=recovery rebuilds it
    # from the tables (its documented way), then it streams from gtidmark's GTID set.
    dbz = debezium_on_worker(connect_worker, mysql, doc, tmp_path / "dbz",
                             snapshot__mode="recovery")
    dbz.create_stopped()
    # Connect's own REST API reads gtidmark's record as the connector's offsets.
    assert connect_worker.offsets(dbz.name) == [{"partition": {"server": db}, "offset": ours}]
    dbz.start()
    try:
        workload.run(200, add_column_at=None)
        workload.close()
        mysql.wait_synced()
        dbz.wait_records(lambda rs: lost_rows(mysql, broker, db, rs, debezium_first=False) == 0,
                         180, "Debezium to carry on where gtidmark stopped")
        records = dbz.records()
    finally:
        assert dbz.stop() == 0
    # It resumed from our GTID set: no transaction streamed before came again.
    assert_none_repeated(records, db, ours["gtids"])


def test_gtidmark_continues_debeziums_read_only_mysql_snapshot(
        mysql: MySqlPair, broker: Broker, connect_worker: ConnectWorker, unique_name: str,
        tmp_path: Path) -> None:
    """Debezium's read-only incremental snapshot (`read.only=true`, a Kafka signal) on the
    worker, stopped mid-table; gtidmark, run with the connector's config and the worker's
    properties, continues it after Debezium's last chunk from Connect's offsets topic."""
    db, tick = unique_name, f"{unique_name}_tick"  # `tick`: a database neither captures
    p = mysql.primary
    p.execute(f"CREATE DATABASE {db}")
    p.execute(f"CREATE TABLE {db}.snap (id INT PRIMARY KEY, v VARCHAR(20))")
    insert_sequence(mysql, db, "snap", SNAP_ROWS, "seq, CONCAT('v', seq)")
    p.execute(f"CREATE DATABASE {tick}")
    p.execute(f"CREATE TABLE {tick}.tick (id INT PRIMARY KEY, at DATETIME(6))")
    mysql.wait_synced()
    signals = f"{db}-signal"
    create_topic(broker.bootstrap, signals)
    dbz = debezium_on_worker(connect_worker, mysql, {"name": f"{db}-connector", "config": {
        "topic.prefix": db, "database.include.list": db}}, tmp_path / "dbz",
        read__only="true", signal__enabled__channels="kafka", signal__kafka__topic=signals,
        signal__kafka__bootstrap__servers=connect_worker.bootstrap,
        signal__kafka__groupId=f"{db}-debezium-signals", signal__poll__interval__ms="200",
        incremental__snapshot__chunk__size="50")
    topic = f"{db}.{db}.snap"
    dbz.start()
    try:
        signal = {"type": "execute-snapshot",
                  "data": {"data-collections": [f"{db}.snap"], "type": "INCREMENTAL"}}
        produce(broker.bootstrap, signals, [(db.encode(), json.dumps(signal).encode())])
        # The replica idle until the first chunk is read (tests/conformance/runs.py says
        # why); then each window closes on a transaction the stream shows after it.
        dbz.wait_log("Incremental snapshot for table", 60)
        time.sleep(1.0)

        def under_way(records: list[dict[str, Any]]) -> bool:
            p.execute(f"REPLACE INTO {tick}.tick VALUES (1, NOW(6))")
            return len(snapshot_rows(records, topic)) >= 300
        dbz.wait_records(under_way, 180, "Debezium's snapshot to be under way", only=[topic])
    finally:
        assert dbz.stop() == 0  # stopped (offsets committed), then deleted
    doc = {"name": dbz.name, "config": {**dbz.connector_json, **QUICK_LEASE}}
    raw = worker_offsets(connect_worker, doc)
    assert raw.get("gtids") and raw.get("incremental_snapshot_collections"), raw
    debezium_seen = snapshot_rows(dbz.records(), topic)
    assert len(set(debezium_seen)) < SNAP_ROWS, "Debezium finished before it was stopped"
    p.execute(f"UPDATE {db}.snap SET v = 'changed' WHERE id % 97 = 0")  # while neither runs
    p.execute(f"DELETE FROM {db}.snap WHERE id % 89 = 0")
    conn = ConnectorProcess(doc, tmp_path)
    conn.run_options = ["--worker", str(connect_worker.home / "connect-distributed.properties")]
    conn.start()
    try:
        conn.wait_log("binlog stream open", timeout=120)
        p.execute(f"INSERT INTO {db}.snap VALUES ({SNAP_ROWS + 1}, 'late')")
        mysql.wait_synced()
        wait_for(lambda: snap_rows_lost(mysql, broker, db, dbz.records()) == 0, 240,
                 "gtidmark to finish Debezium's snapshot", interval=1.0)
    finally:
        assert conn.stop() == 0
    ours = [key_id(json.loads(m.key())) for m in consume_all(broker.bootstrap, topic)
            if m.value() is not None and json.loads(m.value())["payload"]["op"] == "r"]
    # Continued after Debezium's last chunk, not from the table's start.
    assert min(ours) > 50 and min(ours) <= max(debezium_seen) + 1
    assert "cannot be read" not in conn.log()
    assert f"continues: {db}.snap" in conn.log()  # read as Debezium's snapshot in progress


def test_gtidmark_snapshots_again_after_debeziums_interrupted_initial_snapshot(
        mysql: MySqlPair, broker: Broker, connect_worker: ConnectWorker, unique_name: str,
        tmp_path: Path) -> None:
    """Debezium stopped on the worker during its initial (blocking) snapshot: the offsets
    Connect committed say so, and gtidmark snapshots every table again while streaming
    from the position that snapshot started at."""
    db, rows = unique_name, 100_000
    mysql.primary.execute(f"CREATE DATABASE {db}")
    mysql.primary.execute(f"CREATE TABLE {db}.snap (id INT PRIMARY KEY, v VARCHAR(20))")
    insert_sequence(mysql, db, "snap", rows, "seq, CONCAT('v', seq)")
    mysql.wait_synced()
    dbz = debezium_on_worker(connect_worker, mysql, {"name": f"{db}-connector", "config": {
        "topic.prefix": db, "database.include.list": db}}, tmp_path / "dbz",
        snapshot__mode="initial")
    topic = f"{db}.{db}.snap"
    dbz.start(ready=None)
    try:
        dbz.wait_records(lambda rs: len(snapshot_rows(rs, topic)) >= 2000, 180,
                         "Debezium's initial snapshot to be under way", only=[topic])
    finally:
        assert dbz.stop() == 0
    doc = {"name": dbz.name, "config": {**dbz.connector_json, **QUICK_LEASE}}
    raw = worker_offsets(connect_worker, doc)
    assert raw.get("snapshot") == "INITIAL" and raw.get("gtids"), raw  # Debezium 3.6.1 on Connect
    assert len(set(snapshot_rows(dbz.records(), topic))) < rows
    mysql.primary.execute(f"UPDATE {db}.snap SET v = 'changed' WHERE id % 97 = 0")
    target = MYSQL.position(mysql.wait_synced())

    def snapshot_committed() -> bool:
        offsets = worker_offsets(connect_worker, doc)
        return written_by_gtidmark(offsets) and not offsets.get(SNAPSHOT_KEY) \
            and MYSQL.position(offsets["gtids"]).covers(target)

    conn = ConnectorProcess(doc, tmp_path)
    conn.run_options = ["--worker", str(connect_worker.home / "connect-distributed.properties")]
    conn.start()
    try:
        conn.wait_log("binlog stream open", timeout=120)
        wait_for(snapshot_committed, 300, "gtidmark to commit the finished snapshot", 0.5)
    finally:
        assert conn.stop() == 0
    assert snap_rows_lost(mysql, broker, db, dbz.records()) == 0
    assert conn.log().count("Debezium's initial snapshot") == 1
