"""What cannot be captured correctly is refused with one line, never streamed with losses.

Runs against a private MariaDB (tests/integration/solo.py): its GLOBAL settings change here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from connector.preflight import check_server, read_server_settings
from connector.settings.parse import parse_config
from connector.snapshot.session import SqlError, snapshot_session
from tests.connector_tools import ConnectorProcess, connector_document, rebuild
from tests.integration.solo import (
    SoloMariaDb,
    make_certificates,
    solo,
    solo_settings,
    wait_solo_caught_up,
)
from tests.kafka_services import Broker
from tests.services import CDC_PASSWORD, CDC_USER, MariaDbPair, wait_for

__all__ = ["solo"]  # the module-scoped fixture

DYNAMIC_SETTINGS = [("binlog_format", "MIXED", "ROW"), ("binlog_row_image", "MINIMAL", "FULL"),
                    ("binlog_row_metadata", "MINIMAL", "FULL"), ("gtid_strict_mode", "OFF", "ON")]


@pytest.fixture
def solo_db(solo: SoloMariaDb, unique_name: str) -> Iterator[str]:
    solo.execute(f"CREATE DATABASE {unique_name}")
    solo.execute(f"CREATE TABLE {unique_name}.t (id INT PRIMARY KEY, v VARCHAR(30))")
    yield unique_name


def connector(mariadb: MariaDbPair, broker: Broker, solo: SoloMariaDb, db: str, workdir: Path,
              **settings: str) -> ConnectorProcess:
    doc = connector_document(mariadb, broker, db, **solo_settings(solo, db), **settings)
    return ConnectorProcess(doc, workdir)


def wait_exit(proc: ConnectorProcess, timeout: float = 60) -> int:
    assert proc.proc is not None
    return int(wait_for(lambda: proc.proc.poll() is not None and str(proc.proc.returncode),
                        timeout, "the connector to exit"))


def cdc_connection(solo: SoloMariaDb) -> object:
    import pymysql

    return pymysql.connect(host="127.0.0.1", port=solo.port, user=CDC_USER,
                           password=CDC_PASSWORD)


def test_mixed_binlog_format_is_refused_with_one_line(mariadb: MariaDbPair, broker: Broker,
                                                       solo: SoloMariaDb, solo_db: str,
                                                       tmp_path: Path) -> None:
    solo.execute("SET GLOBAL binlog_format = 'MIXED'")  # MariaDB's own default
    try:
        proc = connector(mariadb, broker, solo, solo_db, tmp_path)
        proc.start()
        try:
            assert wait_exit(proc) == 2
        finally:
            proc.ensure_stopped()
    finally:
        solo.execute("SET GLOBAL binlog_format = 'ROW'")
    lines = [line for line in proc.log().splitlines() if "variable binlog_format" in line]
    assert len(lines) == 1
    assert "binlog_format is MIXED" in lines[0] and "binlog_format=ROW" in lines[0]
    assert "binlog_format = ROW" in proc.log().splitlines()  # the my.cnf block's line


@pytest.mark.parametrize(("name", "bad", "good"), DYNAMIC_SETTINGS)
def test_each_required_server_setting_is_named(solo: SoloMariaDb, name: str, bad: str,
                                               good: str) -> None:
    solo.execute(f"SET GLOBAL {name} = '{bad}'")
    try:
        with pytest.raises(Exception, match=rf"server variable {name} is {bad}, gtidmark needs "
                                            rf"{name}={good}"):
            check_server(lambda: cdc_connection(solo))
    finally:
        solo.execute(f"SET GLOBAL {name} = '{good}'")
    assert check_server(lambda: cdc_connection(solo)).name == "mariadb"


def test_replica_is_recognised_and_passes(mariadb: MariaDbPair) -> None:
    import pymysql

    conn = pymysql.connect(**mariadb.cdc_settings())
    try:
        settings = read_server_settings(conn)
    finally:
        conn.close()
    assert settings.flavour.name == "mariadb" and settings.replica
    assert settings.variables["log_slave_updates"] == "ON"


def test_statement_logged_dml_stops_naming_the_gtid(mariadb: MariaDbPair, broker: Broker,
                                                    solo: SoloMariaDb, solo_db: str,
                                                    tmp_path: Path) -> None:
    db = solo_db
    proc = connector(mariadb, broker, solo, db, tmp_path)
    proc.start()
    try:
        proc.wait_log("binlog stream open")
        solo.execute(f"INSERT INTO {db}.t VALUES (1, 'row-logged')")
        conn = solo.root()
        with conn.cursor() as cur:
            cur.execute("SET SESSION binlog_format = 'STATEMENT'")
            cur.execute(f"INSERT INTO {db}.t VALUES (2, 'statement-logged')")
        conn.close()
        gtid = solo.gtid_binlog_pos()
        assert wait_exit(proc) == 1
    finally:
        proc.ensure_stopped()
    assert re.search(rf"stopping: transaction GTID {gtid} writes {db}\.t as a statement",
                     proc.log())
    rebuilt, _ = rebuild(broker.bootstrap, f"{db}.{db}.t")
    assert [r["id"] for r in rebuilt.values()] == [1]
    # The same stop on every restart: the position never moved past that transaction.
    proc.start()
    assert wait_exit(proc) == 1
    assert proc.log().count(f"transaction GTID {gtid} writes") == 2
    # The opt-in: skip it with a warning and stream on.
    doc = json.loads(proc.config_path.read_text())
    doc["config"]["event.processing.failure.handling.mode"] = "warn"
    proc.config_path.write_text(json.dumps(doc))
    proc.start()
    try:
        proc.wait_log(f"skipped: transaction GTID {gtid}")
        solo.execute(f"INSERT INTO {db}.t VALUES (3, 'after')")
        wait_solo_caught_up(solo, broker, doc)
    finally:
        proc.ensure_stopped()
    rebuilt, _ = rebuild(broker.bootstrap, f"{db}.{db}.t")
    assert sorted(r["id"] for r in rebuilt.values()) == [1, 3]


def test_purged_gtid_position_exits_at_once_with_one_line(mariadb: MariaDbPair,
                                                          broker: Broker, solo: SoloMariaDb,
                                                          solo_db: str, tmp_path: Path) -> None:
    db = solo_db
    proc = connector(mariadb, broker, solo, db, tmp_path)
    proc.start()
    try:
        proc.wait_log("binlog stream open")
        solo.execute(f"INSERT INTO {db}.t VALUES (1, 'a')")
        wait_solo_caught_up(solo, broker, json.loads(proc.config_path.read_text()))
        assert proc.stop() == 0
    finally:
        proc.ensure_stopped()
    solo.execute(f"INSERT INTO {db}.t VALUES (2, 'b')")
    solo.purge_older_binlogs()
    proc.start()
    try:
        assert wait_exit(proc, timeout=30) == 1
    finally:
        proc.ensure_stopped()
    log = proc.log()[proc.log_offset:]
    assert "the replica no longer has the binlog for GTID 0-7-" in log
    assert "re-snapshot with" in log
    assert "reconnecting" not in log


def test_verify_ca_without_ca_checks_the_certificate(mariadb: MariaDbPair, broker: Broker,
                                                     solo: SoloMariaDb, solo_db: str,
                                                     tmp_path: Path) -> None:
    assert solo.certs is not None
    (tmp_path / "a").mkdir(exist_ok=True)
    unchecked = connector(mariadb, broker, solo, solo_db, tmp_path / "a",
                          database__ssl__mode="verify_ca")
    unchecked.start()
    try:
        assert wait_exit(unchecked) == 1
    finally:
        unchecked.ensure_stopped()
    assert "CERTIFICATE_VERIFY_FAILED" in unchecked.log()
    for mode in ("verify_ca", "verify_identity"):
        (tmp_path / mode).mkdir()
        checked = connector(mariadb, broker, solo, solo_db, tmp_path / mode,
                            database__ssl__mode=mode, database__ssl__ca=str(solo.certs["ca"]))
        checked.start()
        try:
            checked.wait_log("binlog stream open")
            # SIGTERM leaves the leader group: the next mode's instance takes the lease at
            # once instead of waiting out this one's session (a SIGKILL cost ~19 s here).
            assert checked.stop() == 0
        finally:
            checked.ensure_stopped()


def _snapshot_session_cipher(mariadb: MariaDbPair, broker: Broker, solo: SoloMariaDb,
                             db: str, **settings: str) -> str:
    """Open the snapshot's session (mysqlclient) to `solo`; the TLS cipher it negotiated."""
    doc = connector_document(mariadb, broker, db, **solo_settings(solo, db), **settings)
    conn = snapshot_session(parse_config(doc))
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
            return str(cur.fetchone()[1])
    finally:
        conn.close()


def test_snapshot_session_applies_the_same_tls_modes(mariadb: MariaDbPair, broker: Broker,
                                                     solo: SoloMariaDb, solo_db: str,
                                                     tmp_path: Path) -> None:
    """The snapshot's C driver verifies as the streaming connection does: a certificate
    from another CA is refused under verify_ca/verify_identity, encryption is on from
    `required` up and off with `disabled`."""
    assert solo.certs is not None
    ca = str(solo.certs["ca"])
    other_ca = str(make_certificates(tmp_path / "other")["ca"])
    assert _snapshot_session_cipher(mariadb, broker, solo, solo_db,
                                    database__ssl__mode="disabled") == ""
    assert _snapshot_session_cipher(mariadb, broker, solo, solo_db,
                                    database__ssl__mode="required") != ""
    for mode in ("required", "verify_ca", "verify_identity"):
        assert _snapshot_session_cipher(mariadb, broker, solo, solo_db, database__ssl__mode=mode,
                                        database__ssl__ca=ca) != ""
        with pytest.raises(SqlError, match="(?i)certificate|verif"):
            _snapshot_session_cipher(mariadb, broker, solo, solo_db, database__ssl__mode=mode,
                                     database__ssl__ca=other_ca)


def test_replica_without_log_slave_updates_is_refused(solo: SoloMariaDb) -> None:
    # solo runs without --log-slave-updates; a GTID replication state makes it a replica.
    solo.execute("SET GLOBAL gtid_slave_pos = %s", (solo.gtid_binlog_pos(),))
    try:
        with pytest.raises(Exception, match="server variable log_slave_updates is OFF, gtidmark "
                                            "needs log_slave_updates=ON"):
            check_server(lambda: cdc_connection(solo))
    finally:  # emptying it conflicts with the binlog's GTIDs unless strict mode is off
        solo.execute("SET GLOBAL gtid_strict_mode = OFF")
        solo.execute("SET GLOBAL gtid_slave_pos = ''")
        solo.execute("SET GLOBAL gtid_strict_mode = ON")
    assert check_server(lambda: cdc_connection(solo)).name == "mariadb"


def test_statement_logged_on_the_primary_arrives_as_rows_through_a_row_replica(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    # A replica with binlog_format=ROW re-logs replicated statements as rows: nothing to stop.
    db = unique_name
    mariadb.primary.execute(f"CREATE DATABASE {db}")
    mariadb.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(30))")
    doc = connector_document(mariadb, broker, db)
    proc = ConnectorProcess(doc, tmp_path)
    proc.start()
    try:
        proc.wait_log("binlog stream open")
        conn = mariadb.primary.root()
        with conn.cursor() as cur:
            cur.execute("SET SESSION binlog_format = 'STATEMENT'")
            cur.execute(f"INSERT INTO {db}.t VALUES (1, 'statement on the primary')")
        conn.close()
        mariadb.wait_synced()
        wait_for(lambda: [r["id"] for r in rebuild(broker.bootstrap, f"{db}.{db}.t")[0].values()]
                 == [1], 60, "the row in the topic", 0.3)
        assert proc.proc is not None and proc.proc.poll() is None
    finally:
        proc.ensure_stopped()
