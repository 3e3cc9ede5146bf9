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
from typing import Any

import pymysql

from connector.binlog.declared import DeclaredColumns, with_declared
from connector.schema import TableSchema, schema_from_information_schema, with_catalog_details

log = logging.getLogger(__name__)


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
            if self._conn is None:
                self._conn = self._connect()
            catalog = schema_from_information_schema(self._conn, schema.db, schema.table)
        except (pymysql.MySQLError, LookupError, OSError) as exc:
            self.close()
            self._log_once(schema, f"catalog not read ({exc})")
            return schema
        enriched = with_catalog_details(schema, catalog)
        if enriched is None:
            self._log_once(schema, "the catalog is at another version of the table")
            return schema
        return enriched

    def database_charset(self, db: str) -> str | None:
        """The database's default character set (what a table without its own uses)."""
        try:
            if self._conn is None:
                self._conn = self._connect()
            with self._conn.cursor() as cur:
                cur.execute("SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA "
                            "WHERE SCHEMA_NAME = %s", (db,))
                row = cur.fetchone()
        except (pymysql.MySQLError, OSError):
            self.close()
            return None
        return None if row is None else str(row[0])

    def _log_once(self, schema: TableSchema, why: str) -> None:
        if schema.id not in self._mismatch_logged:
            self._mismatch_logged.add(schema.id)
            log.info("%s: events carry no column defaults for this version (%s)", schema.id, why)

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):  # closing a broken connection
                self._conn.close()
            self._conn = None
