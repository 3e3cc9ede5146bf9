"""MySQL replicas as they really are: foreign and tagged GTIDs in flight on the applier,
a purged binlog history, a replica behind the offsets.

Each test works in a database of its own and leaves the session's replica replicating.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pymysql

from connector.settings.parse import parse_config
from signals.send import build_signal, send_signal
from tests.connector_tools import (
    ConnectorProcess,
    connector_document,
    rebuild,
    source_rows,
    streaming_connector,
)
from tests.general_log import general_log
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.mysql_services import MySqlPair
from tests.services import wait_for


def foreign_uuid() -> str:
    """A server UUID no server here has, starting with a digit: in @@gtid_owned the owner
    thread id before it runs into it (`:1#123e11fa47-...`)."""
    return "1" + str(uuid.uuid4())[1:]


def commit_as(pair: MySqlPair, db: str, gtid: str, sql: str) -> None:
    """`sql` committed on the primary under the GTID `gtid` (another source's, or a tag)."""
    conn = pair.primary.root(db)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SET gtid_next = '{gtid}'")
            cur.execute(sql)
            cur.execute("COMMIT")
            cur.execute("SET gtid_next = 'AUTOMATIC'")
    finally:
        conn.close()


@contextmanager
def rows_locked_on_replica(pair: MySqlPair, db: str, table: str
                           ) -> Iterator[pymysql.connections.Connection]:
    """A replica session holding every row of `table` locked: the applier's workers that
    change them wait, their GTIDs owned (in @@gtid_owned), until the block ends."""
    conn = pair.replica.root(db)
    try:
        with conn.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute(f"SELECT * FROM {table} FOR UPDATE")
        yield conn
    finally:
        conn.rollback()
        conn.close()


def owned_on_replica(pair: MySqlPair) -> str:
    return str(pair.replica.execute("SELECT @@global.gtid_owned")[0][0] or "")


def test_snapshot_completes_with_foreign_and_tagged_gtids_in_flight(
        mysql: MySqlPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """@@gtid_owned with two UUIDs and a tag in flight on the multi-threaded applier: the
    chunk's high watermark holds them and the window closes once they are streamed."""
    db = unique_name
    mysql.primary.execute(f"CREATE DATABASE {db}")
    mysql.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    mysql.primary.execute(f"INSERT INTO {db}.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    held = f"{db}_held"  # not captured: its rows are locked on the replica
    mysql.primary.execute(f"CREATE DATABASE {held}")
    mysql.primary.execute(f"CREATE TABLE {held}.hold (id INT PRIMARY KEY, n INT)")
    mysql.primary.execute(f"INSERT INTO {held}.hold VALUES (1, 0), (2, 0)")
    mysql.wait_synced()
    other, tag = foreign_uuid(), f"tg_{db}"[:32]
    in_flight = [f"{other}:1", f"{other}:{tag}:1"]
    doc = connector_document(mysql, broker, db, snapshot__mode="initial")
    proc = ConnectorProcess(doc, tmp_path)
    log_file = tmp_path / "general.log"
    try:
        with rows_locked_on_replica(mysql, held, "hold"), general_log(mysql.replica, log_file):
            for row, gtid in enumerate(in_flight, start=1):
                commit_as(mysql, held, gtid, f"UPDATE hold SET n = n + 1 WHERE id = {row}")
            wait_for(lambda: all(g.rsplit(":", 1)[0] in owned_on_replica(mysql)
                                 for g in in_flight), 30, "both GTIDs owned on the replica")
            owned = owned_on_replica(mysql)
            # Entries back to back, no separator: what the old parser could not read.
            assert re.search(rf"#\d+{other}", owned), owned
            proc.start()
            # The chunk SELECT and its high watermark ran while both were still in flight.
            chunk = f"FROM `{db}`.`t`"
            wait_for(lambda: re.search(re.escape(chunk) + r".*\n(?:.*\n)*?.*@@global\.gtid_owned",
                                       log_file.read_text(errors="replace")) is not None,
                     60, "the chunk SELECT and the gtid_owned read after it")
            assert owned_on_replica(mysql) == owned
        proc.wait_log(f"snapshot of {db}.t complete", timeout=60)
        # "complete" is logged as the last chunk is handed to the producer, before Kafka
        # acknowledged it (CI once read an empty topic here): wait for the three records.
        topic = f"{db}.{db}.t"
        wait_for(lambda: len(rebuild(broker.bootstrap, topic)[1]) >= 3, 30,
                 f"the snapshot's three records in {topic}")
        rebuilt, envelopes = rebuild(broker.bootstrap, topic)
    finally:
        proc.ensure_stopped()
    assert rebuilt == source_rows(mysql, db, "t", ["id"])
    assert sorted(e["after"]["id"] for e in envelopes if e["op"] == "r") == [1, 2, 3]


def test_no_chunk_is_read_before_the_replica_applied_the_offsets(
        mysql: MySqlPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """Offsets written reading the primary, ahead of a replica whose applier is stopped:
    the snapshot waits for the replica, then reads the row as the offsets' events left it
    (before, its window closed at once on the old row, and the stream skipped the update
    as already sent)."""
    db = unique_name
    mysql.primary.execute(f"CREATE DATABASE {db}")
    mysql.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(10))")
    mysql.primary.execute(f"INSERT INTO {db}.t VALUES (1, 'old'), (2, 'old'), (3, 'old')")
    mysql.wait_synced()
    doc = connector_document(mysql, broker, db)
    config = parse_config(doc)
    mysql.replica.execute("STOP REPLICA SQL_THREAD")
    try:
        mysql.primary.execute(f"UPDATE {db}.t SET v = 'new' WHERE id = 2")
        ahead = mysql.primary.gtid_executed()  # Debezium on the primary sent the update
        create_topic(broker.bootstrap, config.offsets_topic,
                     config={"cleanup.policy": "compact"})
        key = json.dumps([config.name, {"server": config.topic_prefix}], separators=(",", ":"))
        produce(broker.bootstrap, config.offsets_topic, [(key.encode(), json.dumps(
            {"file": "binlog.000001", "pos": 4, "gtids": ahead, "server_id": 1}).encode())])
        with streaming_connector(doc, tmp_path) as proc:
            send_signal(config, build_signal("execute-snapshot", tables=[f"{db}.t"]))
            proc.wait_log("the replica has not applied")
            mysql.replica.execute("START REPLICA SQL_THREAD")
            proc.wait_log(f"snapshot of {db}.t complete", timeout=60)
            assert proc.stop() == 0
    finally:
        mysql.replica.execute("START REPLICA SQL_THREAD")
    _, envelopes = rebuild(broker.bootstrap, f"{db}.{db}.t")
    assert [(e["op"], e["after"]["id"], e["after"]["v"]) for e in envelopes] == [
        ("r", 1, "old"), ("r", 2, "new"), ("r", 3, "old")]
    assert "snapshot chunks go on" in proc.log()
