"""Snapshots of tables with INVISIBLE columns (both flavours) and MySQL's generated
invisible primary key: `SELECT *` leaves those columns out, the binlog's rows carry them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.connector_tools import ConnectorProcess, SourcePair, connector_document
from tests.integration.test_streaming import wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.mysql_services import MySqlPair


def envelopes(broker: Broker, topic: str) -> list[dict[str, Any]]:
    return [json.loads(m.value())["payload"] for m in consume_all(broker.bootstrap, topic)
            if m.value() is not None]


def snapshot_then_stream(pair: SourcePair, broker: Broker, db: str, tmp_path: Path,
                         streamed: str) -> list[dict[str, Any]]:
    """An initial snapshot of `db`, then `streamed` run on the primary; `db.t`'s records."""
    doc = connector_document(pair, broker, db, snapshot__mode="initial")
    proc = ConnectorProcess(doc, tmp_path)
    proc.start()
    try:
        proc.wait_log(f"snapshot of {db}.t complete", timeout=60)
        pair.primary.execute(streamed)
        wait_caught_up(pair, broker, doc, timeout=60)
        assert proc.stop() == 0
    finally:
        proc.ensure_stopped()
    assert "columns of" not in proc.log()  # never read again: the columns did not change
    return envelopes(broker, f"{db}.{db}.t")


def test_snapshot_rows_carry_invisible_columns(source: SourcePair, broker: Broker,
                                               unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    source.primary.execute(f"CREATE DATABASE {db}")
    source.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(10), "
                           "hidden INT DEFAULT 4 INVISIBLE, w INT)")
    source.primary.execute(f"INSERT INTO {db}.t (id, v, hidden, w) VALUES (1, 'a', 7, 1), "
                           "(2, 'b', 0, 2)")
    source.primary.execute(f"INSERT INTO {db}.t VALUES (3, 'c', 3)")  # hidden: its default
    source.wait_synced()
    records = snapshot_then_stream(source, broker, db, tmp_path,
                                   f"UPDATE {db}.t SET hidden = 9 WHERE id = 2")
    reads = [e["after"] for e in records if e["op"] == "r"]
    assert reads == [{"id": 1, "v": "a", "hidden": 7, "w": 1},
                     {"id": 2, "v": "b", "hidden": 0, "w": 2},
                     {"id": 3, "v": "c", "hidden": 4, "w": 3}]
    updates = [e["after"] for e in records if e["op"] == "u"]
    assert updates == [{"id": 2, "v": "b", "hidden": 9, "w": 2}]  # the same columns


def test_snapshot_of_a_generated_invisible_primary_key(mysql: MySqlPair, broker: Broker,
                                                       unique_name: str,
                                                       tmp_path: Path) -> None:
    db = unique_name
    mysql.primary.execute(f"CREATE DATABASE {db}")
    conn = mysql.primary.root(db)
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION sql_generate_invisible_primary_key = ON")
            cur.execute("CREATE TABLE t (v VARCHAR(10))")  # gets `my_row_id`, its key
            cur.execute("INSERT INTO t VALUES ('a'), ('b'), ('c')")
    finally:
        conn.close()
    mysql.wait_synced()
    records = snapshot_then_stream(mysql, broker, db, tmp_path,
                                   f"INSERT INTO {db}.t VALUES ('d')")
    assert [(e["op"], e["after"]) for e in records] == [
        ("r", {"my_row_id": 1, "v": "a"}), ("r", {"my_row_id": 2, "v": "b"}),
        ("r", {"my_row_id": 3, "v": "c"}), ("c", {"my_row_id": 4, "v": "d"})]
