"""The snapshot's reads of the replica: captured tables, a filter's check, chunk SELECTs.

Each on a read-only session (connector/snapshot/session.py): `ChunkSource` reads the catalog
for the coordinator's signals, on the engine thread; `select_chunk` reads one chunk between
its low and high watermark (DBLog), in the chunk reader process (chunk_reader.py), as
table_reads.py reads a table's chunking there. SELECTs and variable reads only; no locks,
no writes.
"""

from __future__ import annotations

import contextlib
import logging
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from connector.events.envelope import RowEncoding
from connector.flavours import Flavour
from connector.gtid import Position
from connector.settings.filters import TableFilter
from connector.snapshot.catch_up import wait_applied
from connector.snapshot.chunks import Condition, chunk_query
from connector.snapshot.session import Session, SqlError
from connector.snapshot.sql_errors import (
    UNKNOWN_COLUMN,
    describe,
    error_code,
    is_connection_error,
)
from connector.snapshot.tables import CHUNK_TIMEOUT_S, condition_refused
from connector.snapshot.window import Key

log = logging.getLogger("gtidmark.snapshot")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ChunkRequest:
    """The chunk of `table` after key `after`, as the coordinator asks the chunk reader for it.

    `number` tells the answer to this request from answers to requests since forgotten;
    `encoding`, when set, has the reader encode each row (the window then holds `ReadRow`s);
    `streamed` is the stream's position when it was asked for (Flavour.read_low).
    """

    number: int
    table: str
    columns: tuple[str, ...]  # the columns `key_columns` and `encoding` were read with
    key_columns: tuple[str, ...]
    condition: Condition | None
    after: Key | None
    limit: int
    encoding: RowEncoding | None
    streamed: Position
    exact_keys: tuple[str, ...] = ()  # key columns read again in full (chunks.exact_key_sql)


@dataclass(frozen=True, slots=True)
class SelectedChunk:
    """One chunk as SELECTed between its watermarks: rows by key, in key order."""

    number: int
    table: str
    rows: dict[Key, Any]  # row dicts, or `ReadRow`s when the request had an encoding
    after: Key | None  # the request's start
    last_key: Key | None  # where the next chunk starts (None: no rows)
    full: bool  # as many rows as asked for: the table may have more
    low: Position
    high: Position
    size: int = 0  # its bytes on the chunk reader's pipe (chunk_budget sizes the next by it)


@dataclass(frozen=True, slots=True)
class ColumnsChanged:
    """The table's columns are not the request's any more: prepare the table again."""

    number: int


def select_chunk(session: Session, request: ChunkRequest, flavour: Flavour,
                 encode: Callable[[dict[str, Any]], Any] | None = None
                 ) -> SelectedChunk | ColumnsChanged:
    """The low watermark, the chunk SELECT and the high watermark, on one session."""
    db, name = request.table.split(".", 1)
    sql, params = chunk_query(db, name, request.columns, request.key_columns, request.after,
                              request.condition, request.limit, exact=request.exact_keys)
    wait_applied(session, flavour, request.streamed)
    with session.cursor() as cur:
        low = flavour.read_low(cur, request.streamed)
        try:
            cur.execute(flavour.bounded(sql, CHUNK_TIMEOUT_S), params)
        except SqlError as exc:
            if error_code(exc) == UNKNOWN_COLUMN:  # dropped or renamed since it was read
                return ColumnsChanged(request.number)
            raise
        rows = cur.fetchall()
        high = flavour.read_high(cur)
    # Selected by name: an added column is a DDL the stream meets before the window closes.
    names = list(request.columns)
    # A key column read in full comes after the table's columns; zip() stops before them.
    key_idx = [len(names) + request.exact_keys.index(c) if c in request.exact_keys
               else names.index(c) for c in request.key_columns]
    if len(key_idx) == 1:
        k = key_idx[0]
        keyed: dict[Key, Any] = {(r[k],): dict(zip(names, r)) for r in rows}
    else:
        key_of = operator.itemgetter(*key_idx)
        keyed = {key_of(r): dict(zip(names, r)) for r in rows}
    if request.exact_keys:  # the row's value too: its event is keyed as binlog events are
        at = [(c, request.key_columns.index(c)) for c in request.exact_keys]
        for key, row in keyed.items():
            for column, i in at:
                row[column] = key[i]
    if encode is not None:
        keyed = {key: encode(row) for key, row in keyed.items()}
    last = tuple(rows[-1][i] for i in key_idx) if rows else None
    return SelectedChunk(request.number, request.table, keyed, request.after, last,
                         len(rows) >= request.limit, low, high)


class ChunkSource:
    def __init__(self, connect: Callable[[], Session],
                 table_filter: TableFilter, flavour: Flavour) -> None:
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

    def _read(self, read: Callable[[Session], T]) -> T:
        """`read` on the session; one found dead (closed while idle, or silent past its read
        timeout) is replaced once, with one line, so a signal is not skipped for it."""
        try:
            return read(self._session())
        except SqlError as exc:
            if not is_connection_error(exc):
                raise
            self.close()
            log.warning("snapshot catalog session lost (%s); reconnecting", describe(exc))
        return read(self._session())

    def captured_tables(self) -> list[str]:
        def tables(session: Session) -> list[tuple[str, str]]:
            with session.cursor() as cur:
                cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                            "WHERE TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_SCHEMA, TABLE_NAME")
                return list(cur.fetchall())
        return [f"{db}.{t}" for db, t in self._read(tables) if self._filter.captured(db, t)]

    def condition_refused(self, table: str, condition: str) -> str | None:
        return self._read(lambda session: condition_refused(session, table, condition,
                                                            self._flavour))
