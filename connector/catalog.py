"""What the binlog's table map does not say about a column: DEFAULT, FLOAT(M,D), JSON...

Debezium reads these from the DDL it streamed, or from SHOW CREATE TABLE for tables it
snapshotted. Here: from the streamed DDL (`DeclaredColumns`) when it covers the table, else
from the replica's information_schema, used only when the catalog's columns are the
binlog's (`with_catalog_details`): a catalog already at a later version of the table (an
ALTER the stream has not reached) is not used for this one.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import pymysql

from connector.binlog.declared import DeclaredColumns, with_declared
from connector.schema import TableSchema, schema_from_information_schema, with_catalog_details

log = logging.getLogger(__name__)
T = TypeVar("T")


def _error_code(exc: BaseException) -> str:
    """The error number only: a server message can quote data."""
    code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
    return type(exc).__name__ if code is None else f"error {code}"


class Catalog:
    """Adds catalog details to binlog table schemas; one information_schema read per version."""

    def __init__(self, connect: Callable[[], Any], declared: DeclaredColumns) -> None:
        self._connect = connect
        self._declared = declared
        self._conn: Any = None
        self._mismatch_logged: set[str] = set()

    def enrich(self, schema: TableSchema) -> TableSchema:
        """Details from the streamed DDL when it covers these columns, else the catalog."""
        declared = self._declared.get(schema.id)
        if declared is not None:
            from_ddl = with_declared(schema, declared)
            if from_ddl is not None:
                return from_ddl
        try:
            catalog = self._read(lambda conn: schema_from_information_schema(
                conn, schema.db, schema.table))
        except (pymysql.MySQLError, LookupError, OSError) as exc:
            self.close()
            self._log_once(schema, f"catalog not read ({exc})")
            return schema
        enriched = with_catalog_details(schema, catalog)
        if enriched is None:
            self._log_once(schema, "the catalog is at another version of the table")
            return schema
        return enriched

    def table(self, db: str, table: str) -> TableSchema | None:
        """The table as the replica's catalog has it now, for a TRUNCATE of a table no row of
        which streamed since its last DDL; None, with one line, when it cannot be read."""
        try:
            return self._read(lambda conn: schema_from_information_schema(conn, db, table))
        except (pymysql.MySQLError, LookupError, OSError) as exc:
            self.close()
            log.warning("%s.%s: catalog not read (%s)", db, table, exc)
            return None

    def database_charset(self, db: str) -> str | None:
        """The database's default character set (what a table without its own uses)."""
        def charset(conn: Any) -> Any:
            with conn.cursor() as cur:
                cur.execute("SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA "
                            "WHERE SCHEMA_NAME = %s", (db,))
                return cur.fetchone()
        try:
            row = self._read(charset)
        except (pymysql.MySQLError, OSError):
            self.close()
            return None
        return None if row is None else str(row[0])

    def _read(self, read: Callable[[Any], T]) -> T:
        """`read` on the session; one found dead (closed while idle, or silent past its read
        timeout, connector.snapshot.session.READ_TIMEOUT_S) is replaced once, with one line:
        a table version read without its catalog details keeps none in its events."""
        try:
            if self._conn is None:
                self._conn = self._connect()
            return read(self._conn)
        except (pymysql.OperationalError, pymysql.InterfaceError, OSError) as exc:
            self.close()
            code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
            if code and not 2000 <= code < 3000:
                raise  # the server refused the query: a new session would too
            log.warning("catalog session lost (%s); reconnecting", _error_code(exc))
        self._conn = self._connect()
        return read(self._conn)

    def _log_once(self, schema: TableSchema, why: str) -> None:
        if schema.id not in self._mismatch_logged:
            self._mismatch_logged.add(schema.id)
            log.info("%s: events carry no column defaults for this version (%s)", schema.id, why)

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):  # closing a broken connection
                self._conn.close()
            self._conn = None
