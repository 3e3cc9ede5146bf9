"""Which columns a table is chunked by, and binlog key values in the form the chunk SELECT has.

A surrogate key must give a total order with no ties, else rows sharing a value collapse
and the next chunk starts after all of them: with a primary key the table is chunked by
(surrogate, primary key); without one the surrogate column must carry a unique index of
its own. A nullable surrogate is refused (NULL never compares greater than a bound).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from connector.schema import TableSchema
from connector.snapshot.window import Key

__all__ = ["KeyRefused", "binlog_key_reader", "chunk_key_columns", "exact_key_columns",
           "unique_columns_query"]

# Approximate types: the binlog carries their exact binary value, but the server prints a
# FLOAT with 6 significant digits and a FLOAT(M,D) or DOUBLE(M,D) with D decimals.
_APPROXIMATE = frozenset({"float", "double"})


class KeyRefused(ValueError):
    """The table cannot be chunked as asked; the message says why, for one log line."""


def unique_columns_query(db: str, table: str) -> tuple[str, list[Any]]:
    """Columns that alone carry a unique index (the catalog: no table scan)."""
    sql = ("SELECT INDEX_NAME, MIN(COLUMN_NAME), COUNT(*) FROM information_schema.STATISTICS "
           "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s AND NON_UNIQUE = 0 "
           "GROUP BY INDEX_NAME")
    return sql, [db, table]


def chunk_key_columns(schema: TableSchema, surrogate: str | None,
                      unique_columns: set[str]) -> tuple[str, ...]:
    """The chunk order for `schema`; KeyRefused when no safe order exists."""
    primary = schema.primary_key
    if not surrogate:
        if primary:
            return primary
        raise KeyRefused("no primary key; send execute-snapshot with surrogate-key naming a "
                         "NOT NULL column with a unique index")
    column = next((c for c in schema.columns if c.name == surrogate), None)
    if column is None:
        raise KeyRefused(f"surrogate key {surrogate!r} is not a column")
    if column.nullable:
        raise KeyRefused(f"surrogate key {surrogate!r} is nullable (rows with NULL would be "
                         "skipped); use a NOT NULL column")
    if primary:
        return (surrogate, *(c for c in primary if c != surrogate))
    if surrogate not in unique_columns:
        raise KeyRefused(f"surrogate key {surrogate!r} has no unique index of its own and the "
                         "table has no primary key (rows sharing a value would be lost)")
    return (surrogate,)


def exact_key_columns(schema: TableSchema, key_columns: tuple[str, ...]) -> tuple[str, ...]:
    """The key columns a chunk SELECT must read in full (`chunks.exact_key_sql`), so that a
    key compares equal to the binlog's and a stored bound neither skips nor repeats rows."""
    return tuple(c for c in key_columns if schema.column(c).type_name in _APPROXIMATE)


def _pad(length: int) -> Callable[[Any], Any]:
    def pad(value: Any) -> Any:
        if isinstance(value, str):  # mysql-replication yields '' for an empty binary value
            value = value.encode("latin-1")
        if isinstance(value, bytes) and len(value) < length:
            return value.ljust(length, b"\x00")
        return value
    return pad


def binlog_key_reader(schema: TableSchema, key_columns: tuple[str, ...],
                      ) -> Callable[[dict[str, Any]], Key]:
    """Row dict from the binlog -> chunk key. BINARY(n) values lose their trailing 0x00 bytes
    in the binlog but not in a SELECT: they are padded back (as the change events are)."""
    fixes: list[tuple[str, Callable[[Any], Any] | None]] = []
    for name in key_columns:
        column = schema.column(name)
        fix = _pad(column.length) if column.type_name == "binary" and column.length else None
        fixes.append((name, fix))
    if all(fix is None for _, fix in fixes):
        return lambda row: tuple(row[c] for c in key_columns)
    return lambda row: tuple(row[c] if fix is None else fix(row[c]) for c, fix in fixes)
