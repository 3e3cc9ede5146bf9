"""Pure rules behind the capture guards: server settings, statement DML, XA, TLS."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.binlog.statements import is_dml, written_tables
from connector.binlog.xa import OpenXa, parse_xa_end
from connector.flavours import MARIADB, MYSQL
from connector.gtid import GtidSet, MariaDbGtidPos, MariaGtid, MysqlGtid
from connector.preflight import (
    ServerSettings,
    cnf_block,
    server_problem,
    server_problems,
    server_report,
)
from connector.settings.errors import ConfigError
from connector.settings.tls import mysql_ssl

GOOD = {"log_bin": "ON", "binlog_format": "ROW", "binlog_row_image": "FULL",
        "binlog_row_metadata": "FULL", "gtid_strict_mode": "ON", "log_slave_updates": "ON",
        "log_bin_compress": "OFF"}
MYSQL_GOOD = {"log_bin": "ON", "binlog_format": "ROW", "binlog_row_image": "FULL",
              "binlog_row_metadata": "FULL", "gtid_mode": "ON", "enforce_gtid_consistency": "ON",
              "binlog_row_value_options": "", "binlog_transaction_compression": "OFF",
              "log_replica_updates": "ON", "replica_parallel_workers": "4",
              "replica_preserve_commit_order": "ON"}


def maria(variables: dict[str, str], replica: bool = True) -> str | None:
    return server_problem(ServerSettings(variables, MARIADB, replica))


def mysql(variables: dict[str, str], replica: bool = True) -> str | None:
    return server_problem(ServerSettings(variables, MYSQL, replica))


def test_a_well_configured_replica_passes() -> None:
    assert maria(GOOD) is None
    assert mysql(MYSQL_GOOD) is None


@pytest.mark.parametrize(("name", "bad"), [("log_bin", "OFF"), ("binlog_format", "STATEMENT"),
                                           ("binlog_row_image", "NOBLOB"),
                                           ("binlog_row_metadata", "MINIMAL"),
                                           ("gtid_strict_mode", "OFF"),
                                           ("log_slave_updates", "OFF"),
                                           ("log_bin_compress", "ON")])
def test_each_bad_setting_is_named_with_the_value_needed(name: str, bad: str) -> None:
    problem = maria({**GOOD, name: bad})
    assert problem is not None and "\n" not in problem
    assert f"server variable {name} is {bad}, gtidmark needs {name}={GOOD[name]}" in problem


def test_primary_needs_no_log_slave_updates_and_mysql_no_strict_mode() -> None:
    settings = {**GOOD, "log_slave_updates": "OFF", "gtid_strict_mode": "OFF"}
    assert maria(settings, replica=False) is not None  # strict mode: MariaDB only
    assert maria({**settings, "gtid_strict_mode": "ON"}, replica=False) is None
    mysql_primary = {**MYSQL_GOOD, "log_replica_updates": "OFF"}
    assert mysql(mysql_primary, replica=False) is None


def test_every_wrong_setting_is_named_at_once_with_one_cnf_block() -> None:
    """A stock MariaDB needs four changes: all four lines, then the block that fixes them."""
    stock = {**GOOD, "log_bin": "OFF", "binlog_format": "MIXED", "binlog_row_metadata": "NO_LOG",
             "gtid_strict_mode": "OFF"}
    problems = server_problems(ServerSettings(stock, MARIADB, replica=False))
    assert [p.split(" is ")[0] for p in problems] == [
        f"database: server variable {name}" for name in
        ("log_bin", "binlog_format", "binlog_row_metadata", "gtid_strict_mode")]
    report = server_report(ServerSettings(stock, MARIADB, replica=False))
    assert report is not None and report.splitlines()[:4] == problems
    assert report.splitlines()[5:] == ["[mariadb]", "log_bin             = binlog",
                                       "binlog_format       = ROW",
                                       "binlog_row_metadata = FULL",
                                       "gtid_strict_mode    = ON"]
    assert server_report(ServerSettings(GOOD, MARIADB, replica=True)) is None


def test_the_cnf_block_comments_out_a_variable_the_server_lacks() -> None:
    settings = {k: v for k, v in MYSQL_GOOD.items() if k != "binlog_row_metadata"}
    block = cnf_block(ServerSettings({**settings, "binlog_row_value_options": "PARTIAL_JSON"},
                                     MYSQL, replica=True))
    assert block[0] == "[mysqld]"
    assert block[1].startswith("# binlog_row_metadata      = FULL  (not a variable of this")
    assert block[2] == 'binlog_row_value_options = ""'


def test_a_missing_variable_is_named() -> None:
    settings = {k: v for k, v in GOOD.items() if k != "binlog_row_metadata"}
    assert "binlog_row_metadata is missing" in (maria(settings) or "")


@pytest.mark.parametrize(("name", "bad", "shown", "good"), [
    ("gtid_mode", "OFF_PERMISSIVE", "OFF_PERMISSIVE", "ON"),
    ("enforce_gtid_consistency", "WARN", "WARN", "ON"),
    ("binlog_row_value_options", "PARTIAL_JSON", "PARTIAL_JSON", "''"),
    ("binlog_transaction_compression", "ON", "ON", "OFF"),
    ("log_replica_updates", "OFF", "OFF", "ON"),
    ("replica_preserve_commit_order", "OFF", "OFF", "ON"),
    ("binlog_row_metadata", "MINIMAL", "MINIMAL", "FULL"),
])
def test_each_bad_mysql_setting_is_named(name: str, bad: str, shown: str, good: str) -> None:
    problem = mysql({**MYSQL_GOOD, name: bad})
    assert problem is not None and "\n" not in problem
    assert f"server variable {name} is {shown}, gtidmark needs {name}={good}" in problem


def test_a_single_threaded_mysql_replica_needs_no_commit_order() -> None:
    assert mysql({**MYSQL_GOOD, "replica_parallel_workers": "1",
                  "replica_preserve_commit_order": "OFF"}) is None


@pytest.mark.parametrize(("query", "target"), [
    ("INSERT INTO x.t VALUES (1)", ("x", "t")),
    ("insert ignore t(a) values (1)", ("d", "t")),
    ("REPLACE LOW_PRIORITY INTO `a b`.`c``d` VALUES (1)", ("a b", "c`d")),
    ("UPDATE t SET v = 1", ("d", "t")),
    ("/* app */ DELETE QUICK FROM s.t WHERE id = 1", ("s", "t")),
    ("LOAD DATA INFILE 'f' INTO TABLE s.t", ("s", "t")),
    ("UPDATE a, b SET a.x = b.x", ("d", "a")),
])
def test_statement_dml_target(query: str, target: tuple[str, str]) -> None:
    assert is_dml(query)
    assert written_tables(query, "d") == (target,)


@pytest.mark.parametrize("query", ["BEGIN", "COMMIT", "XA END X'61',X'',1", "CREATE TABLE t (a INT)",
                                   "SAVEPOINT s", "ALTER TABLE t ADD COLUMN insert_x INT"])
def test_not_dml(query: str) -> None:
    assert not is_dml(query)


@given(st.binary(max_size=20), st.binary(max_size=20), st.integers(0, 2**31 - 1),
       st.sampled_from(["COMMIT", "ROLLBACK"]))
def test_xa_completion_round_trips(gtrid: bytes, bqual: bytes, fmt: int, verb: str) -> None:
    query = f"XA {verb} X'{gtrid.hex().upper()}',X'{bqual.hex()}',{fmt}"
    assert parse_xa_end(query) == (verb, (fmt, gtrid, bqual))


def test_open_xa_holds_the_earliest_start_until_completed() -> None:
    """MariaDB: a position cannot leave a prepare group out, so it stays before it."""
    xa = OpenXa()
    now = MariaDbGtidPos.parse("0-1-20")
    assert xa.hold(now, MARIADB) is None
    xa.prepare((1, b"a", b""), MariaDbGtidPos.parse("0-1-6"), MariaGtid(0, 1, 7), ["rows a"])
    xa.prepare((1, b"b", b""), MariaDbGtidPos.parse("0-1-8"), MariaGtid(0, 1, 9), ["rows b"])
    assert xa.hold(now, MARIADB) == "0-1-6"
    assert xa.complete((1, b"a", b"")) == ["rows a"]
    assert xa.hold(now, MARIADB) == "0-1-8"
    assert xa.complete((1, b"zz", b"")) is None
    assert xa.complete((1, b"b", b"")) == ["rows b"]
    assert xa.hold(now, MARIADB) is None


def test_open_xa_on_mysql_leaves_only_its_prepare_gtids_out() -> None:
    """MySQL: the GTID set after everything streamed, less the open prepare groups."""
    u = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    xa = OpenXa()
    xa.prepare((1, b"a", b""), GtidSet.parse(f"{u}:1-6"), MysqlGtid(u, "", 7), ["rows a"])
    xa.prepare((1, b"b", b""), GtidSet.parse(f"{u}:1-9"), MysqlGtid(u, "", 10), ["rows b"])
    now = GtidSet.parse(f"{u}:1-20")
    assert xa.hold(now, MYSQL) == f"{u}:1-6:8-9:11-20"
    assert xa.complete((1, b"a", b"")) == ["rows a"]
    assert xa.hold(now, MYSQL) == f"{u}:1-9:11-20"


def test_verify_modes_never_connect_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert mysql_ssl("preferred", None) is None
    assert mysql_ssl("verify_ca", "/ca.pem") == {"ca": "/ca.pem", "verify_mode": True,
                                                 "check_hostname": False}
    with_system = mysql_ssl("verify_identity", None)
    assert with_system is not None and with_system["verify_mode"] is True
    assert with_system["check_hostname"] is True and ("ca" in with_system or "capath" in with_system)
    monkeypatch.setattr("connector.settings.tls.system_ca", dict)
    with pytest.raises(ConfigError, match="database.ssl.ca: required with database.ssl.mode="
                                          "verify_ca"):
        mysql_ssl("verify_ca", None)
