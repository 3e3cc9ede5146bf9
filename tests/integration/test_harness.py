"""The harness starts real services that behave as the connector needs them to."""

from __future__ import annotations

from typing import Any

import MySQLdb
import pymysql
import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import WriteRowsEvent

from connector.flavours import flavour_named
from tests.connector_tools import SourcePair
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, create_topic, produce
from tests.mysql_services import MySqlPair


def test_primary_row_reaches_replica(source: SourcePair, unique_name: str) -> None:
    db = unique_name
    source.primary.execute(f"CREATE DATABASE {db}")
    source.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    source.primary.execute(f"INSERT INTO {db}.t VALUES (1, 'hello')")
    source.wait_synced()
    assert source.replica.execute(f"SELECT id, v FROM {db}.t") == [(1, "hello")]


def test_cdc_user_cannot_write_on_replica(source: SourcePair, unique_name: str) -> None:
    db = unique_name
    source.primary.execute(f"CREATE DATABASE {db}")
    source.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY)")
    source.wait_synced()
    conn = pymysql.connect(**source.cdc_settings(), autocommit=True)
    try:
        with conn.cursor() as cur, pytest.raises(pymysql.err.OperationalError) as err:
            cur.execute(f"INSERT INTO {db}.t VALUES (1)")
        assert err.value.args[0] in (1142, 1290)  # command denied / read-only
    finally:
        conn.close()
    assert source.replica.execute(f"SELECT COUNT(*) FROM {db}.t") == [(0,)]


def test_cdc_user_streams_replica_binlog(source: SourcePair, unique_name: str) -> None:
    db = unique_name
    flavour = flavour_named(source.flavour)
    conn = source.replica.root()
    with conn.cursor() as cur:
        start = str(flavour.current_position(cur))
    conn.close()
    source.primary.execute(f"CREATE DATABASE {db}")
    source.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    source.primary.execute(f"INSERT INTO {db}.t VALUES (7, 'seven')")
    source.wait_synced()
    settings = source.cdc_settings()
    settings["passwd"] = settings.pop("password")
    stream = BinLogStreamReader(settings, server_id=9001, is_mariadb=flavour.is_mariadb,
                                auto_position=start, blocking=False,
                                only_events=[WriteRowsEvent], only_schemas=[db])
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


def test_mysql_replica_is_multithreaded_and_read_only(mysql: MySqlPair) -> None:
    assert mysql.flavour == "mysql"
    workers, ordered, read_only, version = mysql.replica.execute(
        "SELECT @@replica_parallel_workers, @@replica_preserve_commit_order, @@read_only, "
        "@@version")[0]
    assert workers >= 2 and ordered == 1 and read_only == 1
    assert version.startswith("9.")
    status = mysql.replica.replica_status()
    assert (status["Replica_IO_Running"], status["Replica_SQL_Running"]) == ("Yes", "Yes")
    assert status["Auto_Position"] == 1


def _forget_logins(pair: MySqlPair) -> None:
    """Empty the replica's caching_sha2_password cache: the next login is a full one.

    NO_WRITE_TO_BINLOG: no GTID of the replica's own (an errant transaction).
    """
    before = pair.replica.gtid_executed()
    pair.replica.execute("FLUSH NO_WRITE_TO_BINLOG PRIVILEGES")
    assert pair.replica.gtid_executed() == before


def _session_tls(cur: Any) -> str:
    cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
    return str(cur.fetchone()[1])


@pytest.mark.parametrize("tls", [True, False], ids=["tls-preferred", "tls-disabled"])
def test_mysql_cdc_user_full_login_with_pymysql(mysql: MySqlPair, tls: bool) -> None:
    """caching_sha2_password's full login over TCP: over TLS (pymysql 1.2+'s default when the
    server offers it, and MySQL makes its own certificates) or RSA (`cryptography`)."""
    _forget_logins(mysql)
    conn = pymysql.connect(**mysql.cdc_settings(), ssl_disabled=not tls)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT CURRENT_USER()")
            assert cur.fetchone() == ("cdc@%",)
            assert bool(_session_tls(cur)) is tls
    finally:
        conn.close()


def test_mysql_cdc_user_full_login_with_mysqlclient(mysql: MySqlPair) -> None:
    """mysqlclient (libmariadb) as the snapshot session connects without forced TLS
    (ssl_mode DISABLED): its caching_sha2_password plugin fetches the server's RSA key."""
    _forget_logins(mysql)
    settings = mysql.cdc_settings()
    conn: Any = MySQLdb.connect(  # its stubs leave close() untyped
        host=settings["host"], port=settings["port"], user=settings["user"],
        password=settings["password"], ssl_mode="DISABLED", connect_timeout=10)
    try:
        cur = conn.cursor()
        cur.execute("SELECT CURRENT_USER(), @@read_only")
        assert cur.fetchone() == ("cdc@%", 1)
        assert _session_tls(cur) == ""
        with pytest.raises(MySQLdb.OperationalError) as err:
            cur.execute("CREATE DATABASE should_not_exist")
        assert err.value.args[0] in (1044, 1142, 1290)  # access denied / read-only
    finally:
        conn.close()
