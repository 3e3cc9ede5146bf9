"""The snapshot's chunk source: lists captured tables, prepares a table, selects chunks.

Every read the snapshot makes of the replica, on one read-only session of its own
(connector/snapshot/session.py): the catalog, and each chunk SELECT between its low and high
watermark (DBLog). SELECTs and variable reads only; no locks, no writes.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from connector.filters import TableFilter
from connector.gtid import Position
from connector.snapshot.chunks import bounded, chunk_query
from connector.snapshot.progress import TableProgress
from connector.snapshot.session import Session
from connector.snapshot.tables import (
    CHUNK_TIMEOUT_S,
    ChunkedTable,
    condition_refused,
    measure,
    open_table,
)
from connector.snapshot.watermarks import read_high, read_low
from connector.snapshot.window import Key

log = logging.getLogger("gtidmark.snapshot")


@dataclass(frozen=True, slots=True)
class SelectedChunk:
    """One chunk as SELECTed between its watermarks: rows by key, in key order."""

    table: str
    rows: dict[Key, dict[str, Any]]
    last_key: Key | None  # where the next chunk starts (None: no rows)
    full: bool  # as many rows as asked for: the table may have more
    low: Position
    high: Position


class ChunkSource:
    def __init__(self, connect: Callable[[], Session],
                 table_filter: TableFilter, flavour: Literal["mysql", "mariadb"]) -> None:
        self._connect = connect
        self._filter = table_filter
        self._flavour = flavour
        self._conn: Session | None = None

    def _session(self) -> Session:
        if self._conn is None:
            self._conn = self._connect()
        return self._conn

    def close(self) -> None:
        """Forget the session (after a server error); the next read opens a new one."""
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    def captured_tables(self) -> list[str]:
        with self._session().cursor() as cur:
            cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                        "WHERE TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_SCHEMA, TABLE_NAME")
            rows = cur.fetchall()
        return [f"{db}.{t}" for db, t in rows if self._filter.captured(db, t)]

    def condition_refused(self, table: str, condition: str) -> str | None:
        return condition_refused(self._session(), table, condition, self._flavour)

    def prepare(self, progress: TableProgress) -> ChunkedTable:
        """Schema, key columns and filter; on a table's first chunk also its max key and size.

        Raises connector.snapshot.tables.TableSkipped with the reason.
        """
        chunked = open_table(self._session(), progress)
        if progress.max_key is None:
            measure(self._session(), progress, chunked, self._flavour)
            progress.started = time.time()
            log.info("snapshot of %s starts: about %d rows, key %s", progress.table,
                     progress.estimate, ", ".join(chunked.key_columns))
        return chunked

    def select(self, progress: TableProgress, table: ChunkedTable,
               limit: int) -> SelectedChunk | None:
        """The chunk after `progress.last_key` and its watermarks; None if the table's columns
        changed since `table` was read (prepare it again)."""
        db, name = progress.table.split(".", 1)
        sql, params = chunk_query(db, name, table.key_columns, progress.last_key,
                                  table.condition, limit)
        with self._session().cursor() as cur:
            low = read_low(cur, self._flavour)
            cur.execute(bounded(sql, self._flavour, CHUNK_TIMEOUT_S), params)
            names = [d[0] for d in cur.description]
            rows = cur.fetchall()
            high = read_high(cur, self._flavour)
        if names != [c.name for c in table.schema.columns]:
            log.info("columns of %s changed since its schema was read; reading it again",
                     progress.table)
            return None
        key_idx = [names.index(c) for c in table.key_columns]
        if len(key_idx) == 1:
            k = key_idx[0]
            keyed = {(r[k],): dict(zip(names, r)) for r in rows}
        else:
            key_of = operator.itemgetter(*key_idx)
            keyed = {key_of(r): dict(zip(names, r)) for r in rows}
        last = tuple(rows[-1][i] for i in key_idx) if rows else None
        return SelectedChunk(progress.table, keyed, last, len(rows) >= limit, low, high)
