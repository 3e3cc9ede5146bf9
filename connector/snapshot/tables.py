"""Reading what a table's snapshot needs from the catalog: columns, chunk key, filter, bounds.

All catalog reads (information_schema), plus two time-bounded SELECTs; a table that
cannot be chunked safely raises `TableSkipped` with the one-line reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from connector.flavours import Flavour
from connector.schema import TableSchema, schema_from_information_schema
from connector.snapshot.chunks import (
    Condition,
    count_estimate_query,
    max_key_query,
    probe_query,
)
from connector.snapshot.keys import (
    KeyRefused,
    binlog_key_reader,
    chunk_key_columns,
    exact_key_columns,
    unique_columns_query,
)
from connector.snapshot.progress import TableProgress
from connector.snapshot.session import Session, SqlError
from connector.snapshot.sql_errors import (
    STATEMENT_TIMEOUTS,
    describe,
    error_code,
    is_connection_error,
)
from connector.snapshot.window import Key
from signals.filters import FilterError, parse_filter

log = logging.getLogger("gtidmark.snapshot")

CHUNK_TIMEOUT_S = 30.0   # a chunk or max-key SELECT running longer is aborted by the server
PROBE_TIMEOUT_S = 5.0    # checking a signal's filter


class TableSkipped(ValueError):
    """The table's snapshot cannot run (gone, no safe key, a filter it refuses)."""


@dataclass(frozen=True, slots=True)
class ChunkedTable:
    """One table as its chunks are read: columns, chunk key, rendered filter, binlog keys."""

    schema: TableSchema
    key_columns: tuple[str, ...]
    condition: Condition | None
    binlog_key: Callable[[dict[str, Any]], Key]
    exact_keys: tuple[str, ...] = ()  # key columns read as `chunks.exact_key_sql`


def open_table(conn: Session, progress: TableProgress) -> ChunkedTable:
    db, table = progress.table.split(".", 1)
    try:
        schema = schema_from_information_schema(conn, db, table)
        with conn.cursor() as cur:
            cur.execute(*unique_columns_query(db, table))
            unique = {str(name) for _, name, count in cur.fetchall() if count == 1}
        keys = chunk_key_columns(schema, progress.surrogate_key, unique)
        condition = None if progress.condition is None else parse_filter(
            progress.condition).render([c.name for c in schema.columns])
    except (LookupError, KeyRefused, FilterError) as exc:
        raise TableSkipped(str(exc)) from None
    return ChunkedTable(schema, keys, condition, binlog_key_reader(schema, keys),
                        exact_key_columns(schema, keys))


def measure(conn: Session, table_id: str, table: ChunkedTable,
            flavour: Flavour) -> tuple[Key, int]:
    """Where the table's snapshot ends (its largest key now, () if empty) and its estimated
    size. Run by the chunk reader, off the stream: it may take up to CHUNK_TIMEOUT_S."""
    db, name = table_id.split(".", 1)
    with conn.cursor() as cur:
        try:
            row = _largest_key(cur, db, name, table, table.condition, flavour)
        except SqlError as exc:
            if table.condition is None or error_code(exc) not in STATEMENT_TIMEOUTS:
                raise
            # A filter matching few rows of a large table scans far back from its end. The
            # largest key of all (one index read) ends the snapshot as well: the chunks after
            # the last matching row come back short, which ends the table too.
            log.info("largest key of %s under its filter took over %gs; the snapshot ends "
                     "at the table's largest key", table_id, CHUNK_TIMEOUT_S)
            row = _largest_key(cur, db, name, table, None, flavour)
        cur.execute(*count_estimate_query(db, name))
        est = cur.fetchone()
    return (tuple(row) if row else ()), (int(est[0] or 0) if est else 0)


def _largest_key(cur: Any, db: str, name: str, table: ChunkedTable,
                 condition: Condition | None, flavour: Flavour) -> Any:
    sql, params = max_key_query(db, name, table.key_columns, condition, table.exact_keys)
    cur.execute(flavour.bounded(sql, CHUNK_TIMEOUT_S), params)
    return cur.fetchone()


def condition_refused(conn: Session, table: str, condition: str,
                      flavour: Flavour) -> str | None:
    """Why `condition` may not run on `table`, or None: the grammar, the table's own
    columns, then the server's plan of a LIMIT 0 query (time-bounded)."""
    db, name = table.split(".", 1)
    try:
        schema = schema_from_information_schema(conn, db, name)
        sql, params = probe_query(db, name, parse_filter(condition).render(
            [c.name for c in schema.columns]))
        with conn.cursor() as cur:
            cur.execute(flavour.bounded(sql, PROBE_TIMEOUT_S), params)
            cur.fetchall()
    except (FilterError, LookupError) as exc:
        return str(exc)
    except SqlError as exc:
        if is_connection_error(exc):
            raise
        return f"not valid SQL: {describe(exc)}"
    return None
