"""Start-up checks: refuse a server whose binlog cannot be captured correctly.

Each setting below silently loses or corrupts rows when wrong (a statement-logged INSERT
carries no row image, a MINIMAL image has no key in its before-image), so the connector
exits 2 with one line naming the server variable and the value it needs, as Debezium does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import pymysql

from connector.config import ConfigError, flavour_of_server

# (variable, value needed, what goes wrong otherwise)
REQUIRED: tuple[tuple[str, str, str], ...] = (
    ("log_bin", "ON", "there is no binlog to read"),
    ("binlog_format", "ROW", "statement-logged changes carry no rows"),
    ("binlog_row_image", "FULL", "updates and deletes would lack their full before-image"),
    ("binlog_row_metadata", "FULL", "column names would be unknown"),
)
MARIADB_REQUIRED = (("gtid_strict_mode", "ON",
                     "snapshot watermarks compare GTID sequence numbers per domain"),)
REPLICA_REQUIRED = (("log_slave_updates", "ON",
                     "replicated transactions would not be in this replica's binlog"),)


def _normalise(value: Any) -> str:
    text = value.decode() if isinstance(value, bytes) else str(value)
    return {"1": "ON", "0": "OFF"}.get(text, text).upper()


def server_problem(variables: dict[str, str], mariadb: bool, replica: bool) -> str | None:
    """The first setting that prevents correct capture, as one line; None when all fit."""
    checks = REQUIRED + (MARIADB_REQUIRED if mariadb else ()) + (
        REPLICA_REQUIRED if replica else ())
    for name, needed, why in checks:
        found = variables.get(name)
        if found is None or _normalise(found) != needed:
            shown = "missing" if found is None else _normalise(found)
            return (f"database: server variable {name} is {shown}, gtidmark needs "
                    f"{name}={needed} ({why})")
    return None


def read_server_settings(conn: Any) -> tuple[dict[str, str], bool, bool]:
    """The global variables `server_problem` checks, whether it is MariaDB, a replica."""
    names = [name for name, _, _ in REQUIRED + MARIADB_REQUIRED + REPLICA_REQUIRED]
    names.append("log_replica_updates")  # MySQL 8's name for log_slave_updates
    names.append("gtid_binlog_pos")  # MariaDB whatever version string it reports
    variables: dict[str, str] = {}
    with conn.cursor() as cur:
        cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN ("
                    + ",".join(["%s"] * len(names)) + ")", names)
        for name, value in cur.fetchall():
            variables[str(name).lower()] = _normalise(value)
        if "log_replica_updates" in variables:
            variables["log_slave_updates"] = variables.pop("log_replica_updates")
        mariadb = flavour_of_server(variables) == "mariadb"
        replica = _mariadb_is_replica(cur) if mariadb else _mysql_is_replica(cur)
    return variables, mariadb, replica


def _mariadb_is_replica(cur: Any) -> bool:
    """A GTID replication state or running replication (SHOW SLAVE STATUS needs SLAVE
    MONITOR, which the connector's user lacks)."""
    cur.execute("SELECT @@global.gtid_slave_pos")
    row = cur.fetchone()
    if row and row[0]:
        return True
    cur.execute("SHOW GLOBAL STATUS LIKE 'Slaves_running'")
    row = cur.fetchone()
    return bool(row and str(row[1]) not in ("0", "OFF"))


def _mysql_is_replica(cur: Any) -> bool:
    """SHOW REPLICA STATUS (8.0.22+) or SHOW SLAVE STATUS: REPLICATION CLIENT suffices."""
    try:
        cur.execute("SHOW REPLICA STATUS")
    except pymysql.MySQLError:  # older servers know only the old name
        cur.execute("SHOW SLAVE STATUS")
    return cur.fetchone() is not None


def check_server(connect: Callable[[], Any]) -> Literal["mysql", "mariadb"]:
    """The server's flavour; raise ConfigError (exit 2) naming the first server variable
    that must change."""
    conn = connect()
    try:
        variables, mariadb, replica = read_server_settings(conn)
    finally:
        conn.close()
    problem = server_problem(variables, mariadb, replica)
    if problem is not None:
        raise ConfigError(problem)
    return "mariadb" if mariadb else "mysql"
