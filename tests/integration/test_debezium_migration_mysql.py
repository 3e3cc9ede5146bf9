"""Offsets both ways between Debezium's MySQL connector on a Kafka Connect worker and
gtidmark, on a real MySQL replica, through the worker's own offsets topic.

Debezium's MySQL connector keeps the replica's executed GTID set in its offsets (`gtids`);
gtidmark, given the worker's `offset.storage.topic` (as a Connect user copies it from
connect-distributed.properties), reads and writes the same key with the same set there, so
each takes over where the other stopped. Debezium's records go to `dbz.`-prefixed topics
(tests/connect_services.py), gtidmark's to the usual ones; together they must equal the
primary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from connector.flavours import MYSQL
from connector.offsets.store import read_committed
from connector.settings.parse import parse_config
from tests.connect_services import ConnectWorker
from tests.connector_tools import connector_document, streaming_connector
from tests.integration.test_debezium_migration import (
    debezium_on_worker,
    lost_rows,
    worker_offsets,
)
from tests.integration.test_streaming import committed_offsets, wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import json_records
from tests.mysql_services import MySqlPair
from tests.services import wait_for
from tests.workload import TABLES, synced_workload


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
