"""The snapshot's session on the replica, through mysqlclient (libmariadb, in C).

Chunk SELECTs are the snapshot's bulk read. Measured on 200,000 rows in 1,024-row keyset
chunks (INT, BIGINT, VARCHAR, DECIMAL), rows fetched and keyed: pymysql 101-150k rows/s,
mysqlclient 340-480k rows/s, and libmariadb reads the result with the GIL released.
Values come back as pymysql's would (the converters in connector/events take both
drivers' values and mysql-replication's): only the invalid dates differ, and those are
restored below.
"""

from __future__ import annotations

import os
from typing import Any, Protocol, cast

import MySQLdb
import MySQLdb.converters
from MySQLdb.constants import FIELD_TYPE

from connector.settings.model import ConnectorConfig

SqlError = MySQLdb.MySQLError

# Snapshot and replica sessions read TIMESTAMP columns in UTC, as the binlog holds them.
SNAPSHOT_SESSION_INIT = "SET time_zone = '+00:00'"


class Session(Protocol):
    """What the snapshot uses of a DB-API connection (mysqlclient's stubs leave it untyped)."""

    def cursor(self) -> Any: ...
    def close(self) -> None: ...


# How long a snapshot or catalog session waits for the server's next bytes. Each statement
# the snapshot runs is bounded on the server (tables.CHUNK_TIMEOUT_S, 30 s, for a chunk or
# a largest key: the server then answers with an error), and result rows keep bytes
# coming, so silence for twice that is a connection gone half-open (a failover, a dead
# host): the read fails with error 2013 and the session is opened again, with one line.
# A largest key that needs more than 30 s is not an error either (tables.measure). It was
# 600 s: a catalog read on the engine thread stalled the stream for ten minutes.
READ_TIMEOUT_S = int(os.environ.get("GTIDMARK_SNAPSHOT_READ_TIMEOUT", "60"))

# Explicit, so that no server-side mode changes quoting (ANSI_QUOTES, NO_BACKSLASH_ESCAPES)
# or what a SELECT returns (PAD_CHAR_TO_FULL_LENGTH).
SESSION_SQL_MODE = "NO_ENGINE_SUBSTITUTION"


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _or_text(convert: Any) -> Any:
    """mysqlclient reads `0000-00-00` (and other dates Python cannot hold) as None, pymysql
    as the text: keep the text, which the converters turn into what Debezium writes."""
    def read(value: bytes | str) -> Any:
        converted = convert(value)
        return _text(value) if converted is None else converted
    return read


def _conversions() -> dict[Any, Any]:
    conv = dict(MySQLdb.converters.conversions)
    for field in (FIELD_TYPE.DATE, FIELD_TYPE.DATETIME, FIELD_TYPE.TIMESTAMP):
        conv[field] = _or_text(conv[field])
    conv[FIELD_TYPE.JSON] = _text  # MySQL's JSON: text, as pymysql returns it
    return conv


CONVERSIONS = _conversions()


def tls_arguments(ssl: dict[str, Any] | None) -> dict[str, Any]:
    """mysqlclient's TLS arguments for the pymysql `ssl` dict of connector.settings.tls.

    libmariadb's VERIFY_CA also checks the host name; a chain checked against the given CA
    without the name is REQUIRED with a CA (libmariadb verifies the chain when given one).
    """
    if ssl is None:
        return {"ssl_mode": "DISABLED"}
    anchors = {k: ssl[k] for k in ("ca", "capath") if ssl.get(k)}
    if ssl.get("check_hostname"):
        return {"ssl_mode": "VERIFY_IDENTITY", "ssl": anchors}
    return {"ssl_mode": "REQUIRED", "ssl": anchors} if anchors else {"ssl_mode": "REQUIRED"}


def snapshot_session(config: ConnectorConfig) -> Session:
    """A read-only session in UTC with a fixed sql_mode, for watermarks and chunk SELECTs."""
    settings = config.mysql_settings()
    conn = MySQLdb.connect(
        host=settings["host"], port=settings["port"], user=settings["user"],
        password=settings["passwd"], charset="utf8mb4", conv=CONVERSIONS, autocommit=True,
        connect_timeout=10, read_timeout=READ_TIMEOUT_S, init_command=SNAPSHOT_SESSION_INIT,
        **tls_arguments(settings.get("ssl")))
    with conn.cursor() as cur:
        cur.execute("SET SESSION TRANSACTION READ ONLY")
        cur.execute(f"SET SESSION sql_mode = '{SESSION_SQL_MODE}'")
    return cast(Session, conn)
