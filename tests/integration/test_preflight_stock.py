"""A stock MariaDB (binlog off, MIXED, no row metadata, no strict mode): every setting it
lacks is named at once, with one my.cnf block, and that block is enough (#24)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pymysql
import pytest

from connector.preflight import check_server
from connector.settings.errors import ConfigError
from tests.kafka_services import Broker
from tests.services import CDC_PASSWORD, CDC_USER, MariaDb

# The options tests/services.py starts every MariaDB with so that capture works.
CAPTURE_OPTIONS = ("--log-bin=", "--binlog-format=", "--binlog-row-image=",
                   "--binlog-row-metadata=", "--gtid-strict-mode=")
EXPECTED = [
    ("database: server variable log_bin is OFF, gtidmark needs log_bin=ON (there is no binlog "
     "to read)"),
    ("database: server variable binlog_format is MIXED, gtidmark needs binlog_format=ROW "
     "(statement-logged changes carry no rows)"),
    ("database: server variable binlog_row_metadata is NO_LOG, gtidmark needs "
     "binlog_row_metadata=FULL (column names would be unknown)"),
    ("database: server variable gtid_strict_mode is OFF, gtidmark needs gtid_strict_mode=ON "
     "(snapshot watermarks compare GTID sequence numbers per domain)"),
    ("database: to fix the 4 settings at once, put these lines in the server's my.cnf and "
     "restart it (README: Setting up your database):"),
    "[mariadb]",
    "log_bin             = binlog",
    "binlog_format       = ROW",
    "binlog_row_metadata = FULL",
    "gtid_strict_mode    = ON",
]


@dataclass
class StockMariaDb(MariaDb):
    """A MariaDB with the distribution's defaults for every setting capture needs."""

    cnf: list[str] = field(default_factory=list)  # my.cnf lines to start with

    def command(self) -> list[str]:
        args = [a for a in super().command() if not a.startswith(CAPTURE_OPTIONS)]
        # `key = value` lines as the server reads them from a my.cnf, relative to datadir.
        return args + [f"--{k.strip()}={v.strip()}" for k, _, v in
                       (line.partition("=") for line in self.cnf if "=" in line)]


@pytest.fixture(scope="module")
def stock(services_dir: Path) -> Iterator[StockMariaDb]:
    db = StockMariaDb("stock", services_dir, server_id=9)
    try:
        db.start()
        db.execute(f"CREATE USER IF NOT EXISTS '{CDC_USER}'@'%' IDENTIFIED BY '{CDC_PASSWORD}'")
        db.execute(f"GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO "
                   f"'{CDC_USER}'@'%'")
    except Exception as exc:  # noqa: BLE001 - a service that cannot start fails the tests
        db.stop()
        pytest.fail(f"stock MariaDB could not start: {exc}", pytrace=False)
    yield db
    db.stop()


def cdc(db: MariaDb) -> pymysql.connections.Connection:
    return pymysql.connect(host="127.0.0.1", port=db.port, user=CDC_USER,
                           password=CDC_PASSWORD)


def test_every_wrong_setting_at_once_then_one_block_fixes_them(stock: StockMariaDb,
                                                               broker: Broker,
                                                               tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        check_server(lambda: cdc(stock))
    assert str(err.value).splitlines() == EXPECTED
    # The command a user runs: exit 2, the same lines on stderr, no traceback.
    path = tmp_path / "connector.json"
    path.write_text(json.dumps({"name": "stock", "config": {
        "database.hostname": "127.0.0.1", "database.port": str(stock.port),
        "database.user": CDC_USER, "database.password": CDC_PASSWORD,
        "database.server.id": "5901", "topic.prefix": "stock", "ha.enabled": "false",
        "bootstrap.servers": broker.bootstrap, "snapshot.mode": "no_data"}}))
    result = subprocess.run([sys.executable, "-m", "connector.cli", "run", "--config",
                             str(path)], capture_output=True, text=True, timeout=120,
                            check=False)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    start = lines.index("error: " + EXPECTED[0])
    assert lines[start + 1:start + len(EXPECTED)] == EXPECTED[1:]
    # The block, pasted into the server's my.cnf, is the one restart it needs.
    stock.stop()
    stock.cnf = EXPECTED[EXPECTED.index("[mariadb]") + 1:]
    stock.start()
    assert check_server(lambda: cdc(stock)).name == "mariadb"


def test_a_wrong_password_is_one_line_naming_the_settings(stock: StockMariaDb, broker: Broker,
                                                          tmp_path: Path) -> None:
    """With HA on and Kafka up: the database's refusal, not a pymysql tuple after the lease."""
    path = tmp_path / "connector.json"
    path.write_text(json.dumps({"name": "wrongpw", "config": {
        "database.hostname": "127.0.0.1", "database.port": str(stock.port),
        "database.user": CDC_USER, "database.password": "not-the-password",
        "database.server.id": "5902", "topic.prefix": "wrongpw",
        "bootstrap.servers": broker.bootstrap}}))
    result = subprocess.run([sys.executable, "-m", "connector.cli", "run", "--config",
                             str(path)], capture_output=True, text=True, timeout=120,
                            check=False)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        (f"error: the database at 127.0.0.1:{stock.port} refused user 'cdc' (database.user, "
         f"database.password): Access denied for user 'cdc'@'127.0.0.1' (using password: YES)")]
