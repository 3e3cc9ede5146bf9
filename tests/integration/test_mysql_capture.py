"""What only MySQL has: tagged GTIDs, its server settings, compressed and purged binlogs.

The tests that change server settings or purge binlogs run on a replica of their own, so
the session's replica stays as every other test expects it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from connector.preflight import check_server
from connector.settings.errors import ConfigError
from tests.connector_tools import ConnectorProcess, connector_document, rebuild, source_rows
from tests.integration.test_streaming import committed_offsets, wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.mysql_services import MySqlPair


def wait_exit(proc: ConnectorProcess, timeout: float = 60) -> int:
    assert proc.proc is not None
    return proc.proc.wait(timeout)


@pytest.fixture(scope="module")
def own_replica(mysql: MySqlPair) -> Iterator[MySqlPair]:
    """A second replica of the session's MySQL primary, for settings and purges."""
    pair = mysql.another_replica("mysql-own", server_id=13)
    yield pair
    pair.replica.stop()


def make_table(pair: MySqlPair, db: str) -> None:
    pair.primary.execute(f"CREATE DATABASE {db}")
    pair.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(30))")
    pair.wait_synced()


def tagged_insert(pair: MySqlPair, db: str, tag: str, seq: int, row: int) -> str:
    """An INSERT committed on the primary under the GTID `uuid:tag:seq`; the GTID."""
    uuid = pair.primary.execute("SELECT @@server_uuid")[0][0]
    gtid = f"{uuid}:{tag}:{seq}"
    conn = pair.primary.root(db)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SET gtid_next = '{gtid}'")
            cur.execute("INSERT INTO t VALUES (%s, 'tagged')", (row,))
            cur.execute("SET gtid_next = 'AUTOMATIC'")
    finally:
        conn.close()
    return gtid


def test_tagged_gtids_stream_and_a_restart_resumes_from_a_tagged_set(
        mysql: MySqlPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    tag = f"tg_{db}"[:32]
    make_table(mysql, db)
    doc = connector_document(mysql, broker, db)
    proc = ConnectorProcess(doc, tmp_path)
    proc.start()
    try:
        proc.wait_log("binlog stream open")
        mysql.primary.execute(f"INSERT INTO {db}.t VALUES (1, 'plain')")
        first = tagged_insert(mysql, db, tag, 1, 2)
        wait_caught_up(mysql, broker, doc)
        assert proc.stop() == 0
        offsets = committed_offsets(broker, doc)
        assert offsets is not None and f":{tag}:1" in offsets["gtids"]
        second = tagged_insert(mysql, db, tag, 2, 3)
        mysql.primary.execute(f"INSERT INTO {db}.t VALUES (4, 'plain')")
        proc.start()
        proc.wait_log("resuming from committed offsets")
        wait_caught_up(mysql, broker, doc)
        assert proc.stop() == 0
    finally:
        proc.ensure_stopped()
    rebuilt, envelopes = rebuild(broker.bootstrap, f"{db}.{db}.t")
    assert rebuilt == source_rows(mysql, db, "t", ["id"])
    gtids = {e["after"]["id"]: e["source"]["gtid"] for e in envelopes}
    assert gtids[2] == first and gtids[3] == second
    assert len(envelopes) == 4  # the restart from a tagged set repeated nothing


def test_mysql_replica_passes_the_checks_and_each_bad_setting_is_refused(
        own_replica: MySqlPair) -> None:
    def connect() -> Any:
        return pymysql.connect(**own_replica.cdc_settings())

    assert check_server(connect).name == "mysql"
    for name, bad, good in (("binlog_row_metadata", "MINIMAL", "FULL"),
                            ("binlog_row_value_options", "PARTIAL_JSON", ""),
                            ("binlog_transaction_compression", "ON", "OFF")):
        own_replica.replica.execute(f"SET GLOBAL {name} = '{bad}'")
        try:
            with pytest.raises(ConfigError, match=rf"server variable {name} is {bad}, "
                                                  rf"gtidmark needs {name}="):
                check_server(connect)
        finally:
            own_replica.replica.execute(f"SET GLOBAL {name} = '{good}'")
    assert check_server(connect).name == "mysql"


def test_a_compressed_transaction_mid_stream_stops_with_one_line(
        own_replica: MySqlPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    make_table(own_replica, db)
    own_replica.primary.execute(f"INSERT INTO {db}.t VALUES (1, 'before')")
    own_replica.wait_synced()
    proc = ConnectorProcess(connector_document(own_replica, broker, db), tmp_path)
    proc.start()
    replica = own_replica.replica
    try:
        proc.wait_log("binlog stream open")
        # The applier takes the global value when it starts: its next writes are compressed.
        replica.execute("SET GLOBAL binlog_transaction_compression = ON")
        replica.execute("STOP REPLICA")
        replica.execute("START REPLICA")
        own_replica.primary.execute(f"INSERT INTO {db}.t VALUES (2, 'compressed')")
        assert wait_exit(proc) == 1
    finally:
        proc.ensure_stopped()
        replica.execute("SET GLOBAL binlog_transaction_compression = OFF")
        replica.execute("STOP REPLICA")
        replica.execute("START REPLICA")
    lines = [line for line in proc.log().splitlines() if "compressed transaction" in line]
    assert lines and "stopping rather than dropping its rows" in lines[0]


def test_purged_gtids_stop_at_once_with_one_line(own_replica: MySqlPair, broker: Broker,
                                                 unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    make_table(own_replica, db)
    doc = connector_document(own_replica, broker, db)
    proc = ConnectorProcess(doc, tmp_path)
    proc.start()
    try:
        proc.wait_log("binlog stream open")
        own_replica.primary.execute(f"INSERT INTO {db}.t VALUES (1, 'a')")
        wait_caught_up(own_replica, broker, doc)
        assert proc.stop() == 0
    finally:
        proc.ensure_stopped()
    own_replica.primary.execute(f"INSERT INTO {db}.t VALUES (2, 'b')")
    own_replica.wait_synced()
    own_replica.replica.purge_older_binlogs()
    proc.start()
    try:
        assert wait_exit(proc, timeout=30) == 1
    finally:
        proc.ensure_stopped()
    log = proc.log()[proc.log_offset:]
    assert "the replica no longer has the binlog for GTID " in log
    assert "re-snapshot with" in log
    assert "reconnecting" not in log
    ids = [json.loads(m.value())["payload"]["after"]["id"]
           for m in consume_all(broker.bootstrap, f"{db}.{db}.t") if m.value() is not None]
    assert ids == [1]
