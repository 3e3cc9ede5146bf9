"""The harness starts real services that behave as the connector needs them to."""

from __future__ import annotations

import pymysql
import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import WriteRowsEvent

from tests.kafka_tools import consume_all, create_topic, produce
from tests.services import Broker, MariaDbPair


def test_primary_row_reaches_replica(mariadb: MariaDbPair, unique_name: str) -> None:
    db = unique_name
    mariadb.primary.execute(f"CREATE DATABASE {db}")
    mariadb.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    mariadb.primary.execute(f"INSERT INTO {db}.t VALUES (1, 'hello')")
    mariadb.wait_synced()
    assert mariadb.replica.execute(f"SELECT id, v FROM {db}.t") == [(1, "hello")]


def test_cdc_user_cannot_write_on_replica(mariadb: MariaDbPair, unique_name: str) -> None:
    db = unique_name
    mariadb.primary.execute(f"CREATE DATABASE {db}")
    mariadb.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY)")
    mariadb.wait_synced()
    conn = pymysql.connect(**mariadb.cdc_settings(), autocommit=True)
    try:
        with conn.cursor() as cur, pytest.raises(pymysql.err.OperationalError) as err:
            cur.execute(f"INSERT INTO {db}.t VALUES (1)")
        assert err.value.args[0] in (1142, 1290)  # command denied / read-only
    finally:
        conn.close()
    assert mariadb.replica.execute(f"SELECT COUNT(*) FROM {db}.t") == [(0,)]


def test_cdc_user_streams_replica_binlog(mariadb: MariaDbPair, unique_name: str) -> None:
    db = unique_name
    start = mariadb.replica.gtid_binlog_pos()
    mariadb.primary.execute(f"CREATE DATABASE {db}")
    mariadb.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    mariadb.primary.execute(f"INSERT INTO {db}.t VALUES (7, 'seven')")
    mariadb.wait_synced()
    settings = mariadb.cdc_settings()
    settings["passwd"] = settings.pop("password")
    stream = BinLogStreamReader(settings, server_id=9001, is_mariadb=True, auto_position=start,
                                blocking=False, only_events=[WriteRowsEvent],
                                only_schemas=[db])
    try:
        rows = [row["values"] for event in stream for row in event.rows]
    finally:
        stream.close()
    assert rows == [{"id": 7, "v": "seven"}]


def test_message_round_trips_through_broker(broker: Broker, unique_name: str) -> None:
    create_topic(broker.bootstrap, unique_name, partitions=2)
    produce(broker.bootstrap, unique_name, [(b"k1", b"v1"), (b"k2", b"v2"), (None, b"v3")])
    got = {(m.key(), m.value()) for m in consume_all(broker.bootstrap, unique_name)}
    assert got == {(b"k1", b"v1"), (b"k2", b"v2"), (None, b"v3")}
