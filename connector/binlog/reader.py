"""The binlog reader: a thread that turns the replica's binlog into transactions.

mysql-replication decodes events; this module owns connection and position. It reconnects
on its own terms (from the GTID position after the last complete transaction it handed
over), because the library's own reconnect replays from its original start position.
A large transaction is handed over in pieces of `PIECE_ROWS` rows or `PIECE_BYTES` binlog
bytes, whichever comes first; after a reconnect in its middle the rows already handed over
are skipped, so nothing is lost or repeated.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import time
from typing import Any

import pymysql
from pymysqlreplication import BinLogStreamReader, binlogstream
from pymysqlreplication.event import (
    GtidEvent,
    HeartbeatLogEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    XAPrepareEvent,
    XidEvent,
)
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)

from connector.binlog import charsets, mysql_wire, tablemaps
from connector.binlog.framing import (
    COMPRESSED_ROWS,
    GTID,
    QUERY,
    ROTATE,
    ROWS,
    TABLE_MAP,
    XA_PREPARE,
    XID,
    Framing,
    UncapturableEvent,
    frames,
)
from connector.binlog.queue import ChangeQueue
from connector.binlog.resume_skip import MidTransaction
from connector.binlog.row_changes import COMPRESSED, image_gap, rows_change, table_gap
from connector.binlog.rowimages import missing_columns
from connector.binlog.statements import is_dml, statement_gap
from connector.binlog.transactions import InnerDdl, Transaction
from connector.binlog.xa import FL_COMPLETED_XA, FL_PREPARED_XA, OpenXa, parse_xa_end
from connector.flavours import Flavour
from connector.gtid import Gtid, Position
from connector.schema import TableSchema, shared_schema_from_table_map

log = logging.getLogger(__name__)

# mysql-replication 1.0.17 reconnects by itself on errors 2006/2013, from its *original*
# start position (an endless duplicate loop, seen here). Turn that off: the errors reach
# BinlogReader.run, which reconnects from the position after the last whole transaction.
binlogstream.MYSQL_EXPECTED_ERROR_CODES = []
charsets.install()  # latin1 as MariaDB decodes it: no stored byte stops the stream
tablemaps.install()  # a table map is parsed once per table version, not once per rows event
mysql_wire.install()  # MySQL GTID sets (tagged ones too) in the stream request

FL_STANDALONE = 1  # MariaDB GTID flag: no BEGIN..COMMIT follows (DDL)
# The CREATE of CREATE TABLE ... SELECT under ROW: inside BEGIN..COMMIT, before its rows
# (the server writes it with the columns spelled out and without the SELECT).
_CREATE_TABLE = re.compile(r"\s*CREATE\s+TABLE\s", re.IGNORECASE)
RECONNECT_DELAYS = (0.2, 0.5, 1.0, 2.0, 5.0)
HEARTBEAT_SECONDS = 1.0  # the server sends a heartbeat this often when it has nothing else
# No byte for this long (ten missed heartbeats) means a half-open connection: reopen it.
READ_TIMEOUT_SECONDS = float(os.environ.get("GTIDMARK_BINLOG_READ_TIMEOUT", "10"))
PIECE_ROWS = int(os.environ.get("GTIDMARK_PIECE_ROWS", "5000"))  # rows per handed-over piece
PIECE_BYTES = 16 * 1024 * 1024  # binlog bytes per piece: wide rows are cut sooner
ER_MASTER_FATAL_ERROR_READING_BINLOG = 1236
# How the line for a purged position begins: the engine reads it (snapshot.mode=when_needed).
PURGED = "the replica no longer has the binlog for GTID"

class BinlogReader(threading.Thread):
    """Streams from a GTID position (the flavour's) into a bounded queue of transactions."""

    def __init__(self, mysql: dict[str, Any], server_id: int, flavour: Flavour, start: Position,
                 out: ChangeQueue[Transaction], max_reconnect_seconds: float = 300.0,
                 framing: Framing = frames, resume: MidTransaction | None = None) -> None:
        super().__init__(name="binlog-reader", daemon=True)
        self._mysql = {k: v for k, v in mysql.items() if k != "database"}
        self._server_id = server_id
        self._flavour = flavour
        self.position = start  # after the last transaction handed over
        self._out = out
        self._max_reconnect = max_reconnect_seconds
        self._framing = framing  # library_frames: the reference the tests compare with
        self._stopping = threading.Event()
        self._stream: BinLogStreamReader | None = None
        self.file = ""
        self.connected = threading.Event()
        self.reconnects = 0
        self._xa = OpenXa()
        # A large transaction handed over in pieces: what a reconnect must not repeat.
        self._partial_gtid: Gtid | None = None
        self._handed_rows = 0
        self._handed_pieces = 0
        self._piece_start = 0  # binlog position the next piece's bytes are counted from
        # Debezium's offsets stopped inside the first transaction: its rows already sent.
        self._resume = resume if resume is not None and resume.pending else None

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
                if _error_code(exc) == ER_MASTER_FATAL_ERROR_READING_BINLOG:
                    self._out.fail(self._refused(exc))
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
            except UncapturableEvent as exc:
                self._out.fail(f"binlog after GTID position {self.position} holds {exc}; "
                               "stopping rather than dropping its rows")
                return
            except Exception as exc:
                if self._stopping.is_set():
                    return  # stop() closed the socket under the read: not a failure
                log.exception("binlog reader failed")
                self._out.fail(f"binlog reader failed: {_one_line(exc)}")
                return
            finally:
                self._close_stream()

    def _refused(self, exc: BaseException) -> str:
        """One line for error 1236: no reconnect can fix a position the server cannot serve."""
        reason = _one_line(exc)
        if "purged" in reason.lower() or "could not find" in reason.lower():
            return (f"{PURGED} {self.position}, re-snapshot "
                    "with fresh offsets (a new offset.storage.topic or connector name) and "
                    f"snapshot.mode=initial (server: {reason})")
        return f"the replica refused to stream from GTID {self.position}: {reason}"

    def _close_stream(self) -> None:
        stream, self._stream = self._stream, None
        _close_quietly(stream)

    def _open(self) -> BinLogStreamReader:
        return BinLogStreamReader(
            connection_settings={**self._mysql, "read_timeout": READ_TIMEOUT_SECONDS},
            server_id=self._server_id,
            is_mariadb=self._flavour.is_mariadb,
            auto_position=self._flavour.stream_start(self.position),
            blocking=True,
            resume_stream=True,
            slave_heartbeat=HEARTBEAT_SECONDS,
            only_events=[MariadbGtidEvent, GtidEvent, QueryEvent, XidEvent, TableMapEvent, WriteRowsEvent,
                         UpdateRowsEvent, DeleteRowsEvent, RotateEvent, HeartbeatLogEvent,
                         XAPrepareEvent],
        )

    def _stream_once(self) -> None:
        if self._resume is not None:
            self._resume.reconnected()
        stream = self._stream = self._open()
        tx: Transaction | None = None
        xa_group = False
        undecided = False  # MySQL: whether BEGIN follows the GTID shows at its first query
        skip_rows = 0  # rows of this transaction handed over before a reconnect
        schemas: dict[int, TableSchema] = {}
        connected = False
        for frame in self._framing(stream, shared_schema_from_table_map):
            if not connected:
                connected = True
                self.connected.set()
                log.info("binlog stream open from GTID %s", self.position)
            kind = frame[0]
            resume = self._resume
            if resume is not None and kind != GTID:
                resume.next_event()
            if kind == ROWS:
                if tx is None:
                    continue
                _, table_id, op, rows, pos, event = frame
                sent = 0 if resume is None else resume.rows_to_drop(
                    len(rows) if rows is not None else len(event.rows))
                table = schemas.get(table_id)
                if table is None:
                    continue
                if rows is None and (missing := missing_columns(event, op == "u")):
                    image_gap(tx, table, missing)  # its rows would stream columns as NULL
                    continue
                change = rows_change(table, op, rows, pos, event)
                if sent:
                    change.rows = change.rows[sent:]
                    if not change.rows:
                        continue
                if skip_rows:
                    dropped = min(skip_rows, len(change.rows))
                    change.rows, skip_rows = change.rows[dropped:], skip_rows - dropped
                    if not change.rows:
                        continue
                tx.changes.append(change)
                if not xa_group and (tx.row_count >= PIECE_ROWS or
                                     pos - self._piece_start >= PIECE_BYTES):
                    self._hand_piece(tx, pos)
                continue
            if kind == GTID:
                # A new GTID while one is open means the library reconnected mid-transaction:
                # the open one is replayed from its start, so drop the partial copy.
                _, log_pos, ts_us, server_id, gtid, flags, start = frame
                begun = log_pos if flags is None else start  # MySQL: BEGIN follows the GTID
                tx = Transaction(gtid=gtid, file=self.file, begin_pos=log_pos, end_pos=log_pos,
                                 ts_us=ts_us, server_id=server_id)
                self._piece_start = log_pos
                resumed = gtid == self._partial_gtid
                skip_rows = self._handed_rows if resumed else 0
                tx.piece = self._handed_pieces if resumed else 0
                undecided = flags is None
                if resume is not None and not undecided:
                    resume.begin()  # MariaDB: the GTID event is the BEGIN
                xa_group = not undecided and bool(flags & FL_PREPARED_XA)
                if not undecided and flags & (FL_STANDALONE | FL_COMPLETED_XA):
                    tx.ddl = ""  # the next query event is the statement and ends it
                continue
            if kind == ROTATE:
                self.file = frame[1]
                continue
            if tx is None:
                continue
            if kind == TABLE_MAP:
                schemas[frame[1]] = frame[2]
                continue
            if kind == COMPRESSED_ROWS:
                table = schemas.get(frame[1])
                if table is not None:
                    table_gap(tx, table, COMPRESSED, "log_bin_compress=OFF")
                continue
            if kind == XA_PREPARE:
                _, log_pos, one_phase, xid = frame
                if not one_phase:
                    self._xa.prepare(xid, self.position, tx.gtid, tx.changes)
                    tx.changes = []
            elif kind == QUERY:
                _, log_pos, thread, db, query, start = frame
                tx.db = db or None
                head = query[:8].upper()  # once: BEGIN, COMMIT and XA START fit in 8
                verb = head if len(query) <= 8 else ""  # the whole query, '' if longer than those
                if undecided or tx.ddl is not None or head in ("BEGIN", "XA START"):
                    tx.thread = thread  # as Debezium: the BEGIN's, kept by statements inside
                if undecided:
                    undecided = False
                    xa_group = head == "XA START"
                    if resume is not None and verb == "BEGIN":
                        resume.begin()
                    if xa_group or verb == "BEGIN":
                        continue
                    tx.ddl = ""  # no BEGIN: a one-statement group (DDL, XA COMMIT)
                if tx.ddl is None:
                    if verb in ("BEGIN", "XA START"):
                        continue
                    if verb != "COMMIT":
                        gap = statement_gap(query, tx.db)
                        if gap is not None:  # every statement of it: any may write a captured table
                            tx.gaps += (gap,)
                        elif _CREATE_TABLE.match(query) and tx.created is None and not tx.changes:
                            tx.created = InnerDdl(query, start, begun)  # CTAS: its rows follow
                        continue
                else:
                    self._statement_group(tx, query)
            elif kind == XID:
                log_pos = frame[1]
            else:
                continue
            tx.end_pos = log_pos
            if resume is not None:
                resume.end()
                if resume.done:
                    self._resume = None
            self.position = self.position.advance(tx.gtid)
            tx.hold = self._xa.hold(self.position, self._flavour)
            self._partial_gtid, self._handed_rows, self._handed_pieces = None, 0, 0
            tx.size = max(0, log_pos - self._piece_start)
            self._out.put(tx, tx.row_count + 1, tx.size, self._stopping)
            tx = None

    def _statement_group(self, tx: Transaction, query: str) -> None:
        """A one-statement group: DDL, XA COMMIT/ROLLBACK, or a statement-logged write."""
        xa = parse_xa_end(query)
        if xa is not None:
            tx.ddl = None
            verb, xid = xa
            held = self._xa.complete(xid)
            if verb == "COMMIT" and held is None:
                log.warning("XA COMMIT at GTID %s of an XA prepared before the start position: "
                            "its rows are not in the stream (re-snapshot its tables)", tx.gtid)
            elif verb == "COMMIT" and held is not None:
                tx.changes = held
        else:
            gap = statement_gap(query, tx.db)
            if gap is not None:
                tx.gaps += (gap,)
            tx.ddl = None if is_dml(query) else query  # CREATE TABLE ... SELECT: both

    def _hand_piece(self, tx: Transaction, pos: int) -> None:
        """Hand over the rows read so far of a large transaction; its end comes later.
        `pos`: where its last rows event starts (its bytes count in the next piece)."""
        piece = Transaction(gtid=tx.gtid, file=tx.file, begin_pos=tx.begin_pos,
                            end_pos=tx.begin_pos, ts_us=tx.ts_us, server_id=tx.server_id,
                            thread=tx.thread, db=tx.db, changes=tx.changes, piece=tx.piece,
                            partial=True, created=tx.created, size=pos - self._piece_start)
        self._piece_start = pos
        self._out.put(piece, piece.row_count, piece.size, self._stopping)
        self._partial_gtid = tx.gtid
        self._handed_rows += piece.row_count
        self._handed_pieces = tx.piece + 1
        tx.changes, tx.piece, tx.created = [], tx.piece + 1, None


def _close_quietly(stream: BinLogStreamReader | None) -> None:
    """Close a stream whose socket another thread may be reading (errors are expected)."""
    if stream is not None:
        with contextlib.suppress(Exception):
            stream.close()


def _error_code(exc: BaseException) -> int | None:
    code = exc.args[0] if isinstance(exc, pymysql.err.MySQLError) and exc.args else None
    return code if isinstance(code, int) else None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def struct_error() -> type[Exception]:
    import struct

    return struct.error
