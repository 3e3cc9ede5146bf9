"""The binlog reader: a thread that turns the replica's binlog into whole transactions.

mysql-replication decodes events; this module owns connection and position. It reconnects
on its own terms (from the GTID position after the last complete transaction it handed
over), because the library's own reconnect replays from its original start position.
Only complete transactions are queued, so a reconnect mid-transaction loses and repeats
nothing.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import pymysql
from pymysqlreplication import BinLogStreamReader, binlogstream
from pymysqlreplication.event import (
    HeartbeatLogEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    XidEvent,
)
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)

from connector.binlog.queue import ChangeQueue
from connector.events.types import restore_empty_sets
from connector.gtid import MariaDbGtidPos, MariaGtid
from connector.schema import TableSchema, schema_from_table_map

log = logging.getLogger(__name__)

# mysql-replication 1.0.17 reconnects by itself on errors 2006/2013, from its *original*
# start position (an endless duplicate loop, seen here). Turn that off: the errors reach
# BinlogReader.run, which reconnects from the position after the last whole transaction.
binlogstream.MYSQL_EXPECTED_ERROR_CODES = []

FL_STANDALONE = 1  # MariaDB GTID flag: no BEGIN..COMMIT follows (DDL)
RECONNECT_DELAYS = (0.2, 0.5, 1.0, 2.0, 5.0)

Op = Literal["c", "u", "d"]


@dataclass(slots=True)
class RowsChange:
    """The rows of one binlog rows event (c/d: row dicts; u: (before, after) pairs)."""

    table: TableSchema
    op: Op
    rows: list[Any]
    pos: int


@dataclass(slots=True)
class Transaction:
    """One committed transaction or DDL statement, in binlog order."""

    gtid: MariaGtid
    file: str
    begin_pos: int
    end_pos: int
    ts_sec: int
    server_id: int
    thread: int | None = None
    db: str | None = None
    ddl: str | None = None
    changes: list[RowsChange] = field(default_factory=list)

    @property
    def row_count(self) -> int:
        return sum(len(change.rows) for change in self.changes)


class BinlogReader(threading.Thread):
    """Streams from a MariaDB GTID position into a bounded queue of transaction batches."""

    def __init__(self, mysql: dict[str, Any], server_id: int, start: MariaDbGtidPos,
                 out: ChangeQueue[Transaction], max_reconnect_seconds: float = 300.0) -> None:
        super().__init__(name="binlog-reader", daemon=True)
        self._mysql = {k: v for k, v in mysql.items() if k != "database"}
        self._server_id = server_id
        self.position = start  # after the last transaction handed over
        self._out = out
        self._max_reconnect = max_reconnect_seconds
        self._stopping = threading.Event()
        self._stream: BinLogStreamReader | None = None
        self.file = ""
        self.connected = threading.Event()
        self.reconnects = 0

    def stop(self) -> None:
        self._stopping.set()
        _close_quietly(self._stream)

    def run(self) -> None:
        failing_since: float | None = None
        attempt = 0
        while not self._stopping.is_set():
            try:
                self._stream_once()
                failing_since, attempt = None, 0
            except (pymysql.err.OperationalError, pymysql.err.InterfaceError, OSError,
                    EOFError, AttributeError, struct_error()) as exc:
                if self._stopping.is_set():
                    return
                now = time.monotonic()
                failing_since = failing_since or now
                if now - failing_since > self._max_reconnect:
                    self._out.fail(f"binlog connection lost for {now - failing_since:.0f}s: "
                                   f"{_one_line(exc)}")
                    return
                delay = RECONNECT_DELAYS[min(attempt, len(RECONNECT_DELAYS) - 1)]
                attempt += 1
                self.reconnects += 1
                log.warning("binlog connection lost (%s); reconnecting from GTID %s in %.1fs",
                            _one_line(exc), self.position, delay)
                self.connected.clear()
                self._stopping.wait(delay)
            except Exception as exc:
                if self._stopping.is_set():
                    return  # stop() closed the socket under the read: not a failure
                log.exception("binlog reader failed")
                self._out.fail(f"binlog reader failed: {_one_line(exc)}")
                return
            finally:
                self._close_stream()

    def _close_stream(self) -> None:
        stream, self._stream = self._stream, None
        _close_quietly(stream)

    def _open(self) -> BinLogStreamReader:
        return BinLogStreamReader(
            connection_settings=self._mysql,
            server_id=self._server_id,
            is_mariadb=True,
            auto_position=str(self.position),
            blocking=True,
            resume_stream=True,
            slave_heartbeat=1.0,
            only_events=[MariadbGtidEvent, QueryEvent, XidEvent, TableMapEvent, WriteRowsEvent,
                         UpdateRowsEvent, DeleteRowsEvent, RotateEvent, HeartbeatLogEvent],
        )

    def _stream_once(self) -> None:
        stream = self._stream = self._open()
        tx: Transaction | None = None
        schemas: dict[int, TableSchema] = {}
        for event in stream:
            if not self.connected.is_set():
                self.connected.set()
                log.info("binlog stream open from GTID %s", self.position)
            if isinstance(event, RotateEvent):
                self.file = event.next_binlog
                continue
            if isinstance(event, HeartbeatLogEvent):
                continue
            if isinstance(event, MariadbGtidEvent):
                # A new GTID while one is open means the library reconnected mid-transaction:
                # the open one is replayed from its start, so drop the partial copy.
                tx = Transaction(gtid=MariaGtid(event.domain_id, event.server_id,
                                                event.gtid_seq_no),
                                 file=self.file, begin_pos=event.packet.log_pos,
                                 end_pos=event.packet.log_pos, ts_sec=event.timestamp,
                                 server_id=event.server_id)
                standalone = bool(event.flags & FL_STANDALONE)
                if standalone:
                    tx.ddl = ""  # the next query event is the statement and ends it
                continue
            if tx is None:
                continue
            if isinstance(event, TableMapEvent):
                schemas[event.table_id] = _cached_schema(event)
                continue
            if isinstance(event, (WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent)):
                table = schemas.get(event.table_id)
                if table is None:
                    continue
                tx.changes.append(_rows_change(event, table))
                continue
            if isinstance(event, QueryEvent):
                query = _decode(event.query)
                tx.thread = event.slave_proxy_id
                tx.db = _decode(event.schema) or None
                if tx.ddl is None and query.upper() in ("BEGIN", "XA START"):
                    continue
                if tx.ddl is None and query.upper() != "COMMIT":
                    continue  # a statement-based event inside a transaction: not captured
                if tx.ddl is not None:
                    tx.ddl = query
            elif not isinstance(event, XidEvent):
                continue
            tx.end_pos = event.packet.log_pos
            self.position = self.position.advance(tx.gtid)
            self._out.put(tx, tx.row_count + 1, self._stopping)
            tx = None


_schema_cache: dict[tuple[Any, ...], TableSchema] = {}


def _cached_schema(event: TableMapEvent) -> TableSchema:
    signature = (event.schema, event.table,
                 tuple((c.name, c.type, getattr(c, "unsigned", False)) for c in event.columns))
    found = _schema_cache.get(signature)
    if found is None:
        found = _schema_cache[signature] = schema_from_table_map(event)
    return found


def _image(row: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    values: dict[str, Any] = row[f"{prefix}values"]
    none_sources = row.get(f"{prefix}none_sources")
    return restore_empty_sets(values, none_sources) if none_sources else values


def _rows_change(event: Any, table: TableSchema) -> RowsChange:
    pos = event.packet.log_pos
    if isinstance(event, WriteRowsEvent):
        return RowsChange(table, "c", [_image(row) for row in event.rows], pos)
    if isinstance(event, DeleteRowsEvent):
        return RowsChange(table, "d", [_image(row) for row in event.rows], pos)
    return RowsChange(table, "u", [(_image(row, "before_"), _image(row, "after_"))
                                   for row in event.rows], pos)


def _close_quietly(stream: BinLogStreamReader | None) -> None:
    """Close a stream whose socket another thread may be reading (errors are expected)."""
    if stream is not None:
        with contextlib.suppress(Exception):
            stream.close()


def _decode(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value or "")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def struct_error() -> type[Exception]:
    import struct

    return struct.error
