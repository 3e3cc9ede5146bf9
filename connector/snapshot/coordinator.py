"""The incremental snapshot coordinator: DBLog's chunk loop beside the binlog stream.

For each chunk: read the low watermark, SELECT the next chunk by key, read the high
watermark, and open a window. While the stream is inside the window, every row change of
the chunked table drops the chunk row with that key (the change event carries newer
state). When the stream has applied every transaction up to the high watermark, the
remaining rows go out as op=r. A DDL on the chunked table discards the chunk; it is
selected again with new watermarks. No locks, no writes: SELECTs and variable reads only.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import time
import uuid
from collections.abc import Callable
from typing import Any

import pymysql

from connector.config import ConnectorConfig
from connector.events.envelope import EventEncoder, SourceInfo
from connector.filters import TableFilter
from connector.gtid import MariaDbGtidPos, MariaGtid
from connector.kafka import TopicAdmin
from connector.schema import TableSchema
from connector.sink import Sink
from connector.snapshot.chunks import Condition, bounded, chunk_query
from connector.snapshot.progress import TableProgress
from connector.snapshot.requests import MAX_STATE_BYTES, plan_snapshot, state_size
from connector.snapshot.sql_errors import describe, is_connection_error
from connector.snapshot.tables import (
    CHUNK_TIMEOUT_S,
    TableSkipped,
    condition_refused,
    measure,
    open_table,
)
from connector.snapshot.watermarks import read_high, read_low
from connector.snapshot.window import ChunkWindow, Key
from signals.channel import ReceivedSignal
from signals.models import (
    ExecuteSnapshot,
    Log,
    PauseSnapshot,
    ResumeSnapshot,
    SetThrottle,
    Signal,
    StopSnapshot,
)
from signals.patterns import MatchBudget, PatternTooSlow, collection_matches

log = logging.getLogger("gtidmark.snapshot")

PROGRESS_LOG_INTERVAL = 10.0
# Explicit, so that no server-side mode changes quoting (ANSI_QUOTES, NO_BACKSLASH_ESCAPES)
# or what a SELECT returns (PAD_CHAR_TO_FULL_LENGTH).
SESSION_SQL_MODE = "NO_ENGINE_SUBSTITUTION"


class SnapshotRefused(ValueError):
    """A snapshot signal that cannot be acted on; the message is its one log line."""


class SnapshotCoordinator:
    def __init__(self, config: ConnectorConfig, encoder: EventEncoder, sink: Sink,
                 table_filter: TableFilter, admin: TopicAdmin,
                 connect: Callable[[], pymysql.connections.Connection]) -> None:
        self._config = config
        self._encoder = encoder
        self._sink = sink
        self._filter = table_filter
        self._admin = admin
        self._connect = connect
        self._conn: pymysql.connections.Connection | None = None
        self.snapshot_id: str | None = None
        self.queue: list[TableProgress] = []
        self.paused = False
        self.chunk_size = config.chunk_size
        self.chunk_delay_ms = config.chunk_delay_ms
        self._pending_initial = False
        self._window: ChunkWindow | None = None
        self._window_key: tuple[Any, ...] | None = None  # last key of the buffered chunk
        self._window_full = False
        self._schema: TableSchema | None = None
        self._key_columns: tuple[str, ...] = ()
        self._condition: Condition | None = None
        self._binlog_key: Callable[[dict[str, Any]], Key] = lambda row: ()
        self.watched_table: str | None = None
        self._next_chunk_at = 0.0
        self._unsafe = 0
        self._next_log = 0.0
        self._file = ""
        self._pos = 0
        self.completed: list[str] = []
        # Read by the metrics: chunks opened, re-selected, rows dropped, rows out per table.
        self.chunks_opened = 0
        self.chunks_reselected = 0
        self.rows_dropped = 0
        self.rows_scanned: dict[str, int] = {}
        self.window_opened_at: float | None = None

    # -- offsets -----------------------------------------------------------------------

    def state(self) -> dict[str, Any] | None:
        if not self.queue and not self._pending_initial:
            return None
        return {"id": self.snapshot_id, "paused": self.paused, "chunk_size": self.chunk_size,
                "chunk_delay_ms": self.chunk_delay_ms, "initial": self._pending_initial,
                "tables": [t.to_json() for t in self.queue]}

    def restore(self, state: dict[str, Any]) -> None:
        self.snapshot_id = state.get("id")
        self.paused = bool(state.get("paused"))
        self.chunk_size = int(state.get("chunk_size", self.chunk_size))
        self.chunk_delay_ms = int(state.get("chunk_delay_ms", self.chunk_delay_ms))
        self._pending_initial = bool(state.get("initial"))
        self.queue = [TableProgress.from_json(t) for t in state.get("tables", [])]
        if self.queue:
            log.info("snapshot %s resumes%s: %s", self.snapshot_id,
                     " (paused)" if self.paused else "",
                     "; ".join(t.describe() for t in self.queue))

    def start_initial(self) -> None:
        """snapshot.mode=initial: every captured table, listed on the first step."""
        self._pending_initial = True
        self.snapshot_id = f"initial-{uuid.uuid4()}"

    # -- signals -----------------------------------------------------------------------

    def on_signal(self, received: ReceivedSignal) -> None:
        """Act on one signal and log one line saying what was done or why it was skipped."""
        signal = received.signal
        if signal is None:
            return  # the channel logged why it was skipped
        where = f"signal at offset {received.offset} ({signal.TYPE})"
        try:
            done = self._act(signal)
        except (PatternTooSlow, SnapshotRefused) as exc:
            log.warning("%s skipped: %s", where, exc)
        except pymysql.MySQLError as exc:
            self._close_conn()
            log.warning("%s skipped: the replica refused a query (%s)", where, describe(exc))
        except Exception as exc:  # noqa: BLE001 - a signal must never stop streaming
            log.warning("%s skipped: unexpected %s", where, type(exc).__name__)
        else:
            log.info("%s: %s", where, done)

    def _act(self, signal: Signal) -> str:
        if isinstance(signal, ExecuteSnapshot):
            return self._execute(signal)
        if isinstance(signal, StopSnapshot):
            return self._stop(signal.data_collections)
        if isinstance(signal, PauseSnapshot | ResumeSnapshot):
            self.paused = isinstance(signal, PauseSnapshot)
            return "snapshot paused" if self.paused else "snapshot resumed"
        if isinstance(signal, SetThrottle):
            if signal.chunk_size is not None:
                self.chunk_size = signal.chunk_size
            if signal.chunk_delay_ms is not None:
                self.chunk_delay_ms = signal.chunk_delay_ms
            return (f"snapshot throttle: chunk size {self.chunk_size}, "
                    f"delay {self.chunk_delay_ms} ms")
        assert isinstance(signal, Log)
        return "signal log: " + signal.message.replace("\r", "\\r").replace("\n", "\\n")

    def _execute(self, signal: ExecuteSnapshot) -> str:
        if signal.snapshot_type != "incremental":
            raise SnapshotRefused(f"type {signal.snapshot_type!r} refused: only incremental "
                                  "snapshots run (streaming never stops)")
        queued = {t.table for t in self.queue}
        plan = plan_snapshot(signal, self._captured_tables(), queued, self._condition_refused)
        if not plan.added:
            raise SnapshotRefused(plan.summary())
        tables = [t.to_json() for t in (*self.queue, *plan.added)]
        if state_size({"tables": tables}) > MAX_STATE_BYTES:
            raise SnapshotRefused(f"the snapshot queue would exceed {MAX_STATE_BYTES} bytes "
                                  "in the offsets (too many tables or filters too long)")
        self.queue += plan.added
        self.snapshot_id = self.snapshot_id or signal.id or str(uuid.uuid4())
        return f"snapshot {self.snapshot_id}: {plan.summary()}"

    def _condition_refused(self, table: str, condition: str) -> str | None:
        return condition_refused(self._session(), table, condition, self._config.flavour)

    def _stop(self, collections: list[str]) -> str:
        if not collections:
            stopped = [t.table for t in self.queue]
            self.queue.clear()
            self._pending_initial = False
        else:
            budget = MatchBudget()
            stopped = [t.table for t in self.queue
                       if any(collection_matches(p, t.table, budget) for p in collections)]
            self.queue = [t for t in self.queue if t.table not in stopped]
        if self._window is not None and self._window.table_id in stopped:
            self._drop_window()
        return f"snapshot stopped for {', '.join(stopped) or 'nothing (none running)'}"

    # -- the stream's side ---------------------------------------------------------------

    def wants_cpu(self) -> bool:
        """True when the next chunk can be selected now (the engine should not idle)."""
        return bool(self.queue or self._pending_initial) and not self.paused and \
            self._window is None and time.monotonic() >= self._next_chunk_at

    def on_row_change(self, table_id: str, gtid: MariaGtid, row: dict[str, Any]) -> None:
        window = self._window
        if window is not None and table_id == self.watched_table:
            window.on_row_change(table_id, gtid, self._binlog_key(row))

    def on_ddl(self, table_id: str, kind: str) -> None:
        if self._window is not None and self._window.table_id == table_id:
            log.info("DDL (%s) on %s while its chunk was buffered: selecting it again",
                     kind, table_id)
            self._drop_window()
            self.chunks_reselected += 1
        if kind == "DROP" and any(t.table == table_id for t in self.queue):
            log.warning("table %s dropped during its snapshot; its snapshot ends", table_id)
            self.queue = [t for t in self.queue if t.table != table_id]
        if self.queue and self.queue[0].table == table_id:
            self._schema = None  # read the new columns before the next chunk

    def after_transaction(self, processed: MariaDbGtidPos, file: str = "", pos: int = 0) -> None:
        self._file, self._pos = file or self._file, pos or self._pos
        window = self._window
        if window is not None and window.ready(processed):
            self._emit(window)

    def step(self, processed: MariaDbGtidPos, caught_up: bool) -> None:
        """Open the next chunk's window when none is open; close it at once if ready."""
        if self._window is not None:
            if self._window.ready(processed):
                self._emit(self._window)
            return
        if not self.wants_cpu():
            return
        try:
            if self._pending_initial:
                self._queue_all_tables()
            if not self.queue:
                return
            self._select_chunk(processed)
        except pymysql.MySQLError as exc:
            table = self.queue[0].table if self.queue else "?"
            self._close_conn()
            if is_connection_error(exc) or not self.queue:
                log.warning("snapshot chunk of %s failed (%s); retrying in 1s", table,
                            describe(exc))
                self._next_chunk_at = time.monotonic() + 1.0
                return
            log.warning("snapshot of %s skipped: the replica refused its chunk query (%s)",
                        table, describe(exc))
            self._finish_table(skipped=True)
            return
        if self._window is not None and self._window.ready(processed):
            self._emit(self._window)

    # -- chunks --------------------------------------------------------------------------

    def _session(self) -> pymysql.connections.Connection:
        """The snapshot's connection, its sql_mode set: no mode of the server's changes how
        our statements are quoted (ANSI_QUOTES, NO_BACKSLASH_ESCAPES) or what CHAR returns."""
        if self._conn is None:
            conn = self._connect()
            with conn.cursor() as cur:
                cur.execute(f"SET SESSION sql_mode = '{SESSION_SQL_MODE}'")
            self._conn = conn
        return self._conn

    def _cursor(self) -> Any:
        return self._session().cursor()

    def _close_conn(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    def _captured_tables(self) -> list[str]:
        with self._cursor() as cur:
            cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES "
                        "WHERE TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_SCHEMA, TABLE_NAME")
            rows = cur.fetchall()
        return [f"{db}.{t}" for db, t in rows if self._filter.captured(db, t)]

    def _queue_all_tables(self) -> None:
        tables = self._captured_tables()
        self._pending_initial = False
        self.queue = [TableProgress(table=t) for t in tables]
        log.info("initial snapshot %s of %d tables: %s", self.snapshot_id, len(tables),
                 ", ".join(tables) or "none")

    def _prepare_table(self, progress: TableProgress) -> bool:
        """Schema, key columns, filter, max key and size estimate; False: table skipped."""
        try:
            chunked = open_table(self._session(), progress)
        except TableSkipped as exc:
            log.warning("snapshot of %s skipped: %s", progress.table, exc)
            return False
        self._schema, self._key_columns = chunked.schema, chunked.key_columns
        self._condition, self._binlog_key = chunked.condition, chunked.binlog_key
        if progress.max_key is None:
            measure(self._session(), progress, chunked, self._config.flavour)
            progress.started = time.time()
            log.info("snapshot of %s starts: about %d rows, key %s", progress.table,
                     progress.estimate, ", ".join(chunked.key_columns))
        return True

    def _select_chunk(self, processed: MariaDbGtidPos) -> None:
        while self.queue:
            progress = self.queue[0]
            stale = self._schema is None or self._schema.id != progress.table
            if stale and not self._prepare_table(progress):
                self._finish_table(skipped=True)
                continue
            if progress.max_key == ():
                self._finish_table()
                continue
            break
        else:
            return
        assert self._schema is not None
        db, table = progress.table.split(".", 1)
        flavour = self._config.flavour
        sql, params = chunk_query(db, table, self._key_columns, progress.last_key,
                                  self._condition, self.chunk_size)
        with self._cursor() as cur:
            low = read_low(cur, flavour)
            cur.execute(bounded(sql, flavour, CHUNK_TIMEOUT_S), params)
            names = [d[0] for d in cur.description]
            rows = cur.fetchall()
            high = read_high(cur, flavour)
        if names != [c.name for c in self._schema.columns]:
            log.info("columns of %s changed since its schema was read; reading it again",
                     progress.table)
            self._schema = None
            return
        window_probe = ChunkWindow(progress.table, {}, low, high)
        if not window_probe.safe_to_open(processed):
            # The stream already emitted a transaction L does not hold: the SELECT may not
            # have seen it, and no later event would correct the chunk. Select again.
            self._unsafe += 1
            self.chunks_reselected += 1
            if self._unsafe % 50 == 0:
                log.warning("low watermark %s keeps lagging the stream position %s "
                            "(%d retries); is the source a replica with gtid_slave_pos?",
                            low, processed, self._unsafe)
            self._next_chunk_at = time.monotonic() + min(0.001 * self._unsafe, 0.1)
            return
        self._unsafe = 0
        key_idx = [names.index(c) for c in self._key_columns]
        if len(key_idx) == 1:
            k = key_idx[0]
            buffered = {(r[k],): dict(zip(names, r)) for r in rows}
        else:
            key_of = operator.itemgetter(*key_idx)
            buffered = {key_of(r): dict(zip(names, r)) for r in rows}
        last = tuple(rows[-1][i] for i in key_idx) if rows else None
        self._window_key = last
        self._window_full = len(rows) >= self.chunk_size
        self._window = ChunkWindow(progress.table, buffered, low, high)
        self.watched_table = progress.table
        self.chunks_opened += 1
        self.window_opened_at = time.monotonic()

    def _drop_window(self) -> None:
        if self._window is not None:
            self._window.discard()
        self._window = None
        self.watched_table = None
        self.window_opened_at = None

    def _emit(self, window: ChunkWindow) -> None:
        self.rows_dropped += window.dropped
        rows = window.close()
        self._window = None
        self.watched_table = None
        self.window_opened_at = None
        progress = self.queue[0]
        assert self._schema is not None
        # Keyed by the primary key even with a surrogate key (that one only orders chunks),
        # as Debezium does: one identity per row for compaction and upsert sinks.
        enc = self._encoder.table(self._schema)
        self._admin.ensure([enc.topic])
        now_ms = int(time.time() * 1000)
        source = SourceInfo(ts_ms=now_ms, db=self._schema.db, table=self._schema.table,
                            server_id=0, gtid=None, file=self._file, pos=self._pos, row=0,
                            thread=None, query=None, snapshot="incremental")
        send = self._sink.send
        topic = enc.topic
        for row in rows:
            send(topic, enc.key(row), enc.value("r", None, row, source, now_ms))
        progress.rows += len(rows)
        self.rows_scanned[progress.table] = progress.rows
        progress.last_key = self._window_key
        # Key order is the server's collation, not Python's: compare only for equality.
        done = (not self._window_full or progress.last_key is None or
                progress.last_key == progress.max_key)
        if done:
            self._finish_table()
        self._next_chunk_at = time.monotonic() + self.chunk_delay_ms / 1000.0

    def _finish_table(self, skipped: bool = False) -> None:
        progress = self.queue.pop(0)
        self._schema = None
        if not skipped:
            log.info("snapshot of %s complete: %d rows in %.1fs", progress.table, progress.rows,
                     time.time() - progress.started)
            self.completed.append(progress.table)
        if not self.queue:
            log.info("snapshot %s finished", self.snapshot_id)
            self.snapshot_id = None

    def log_progress(self) -> None:
        now = time.monotonic()
        if not self.queue or now < self._next_log:
            return
        self._next_log = now + PROGRESS_LOG_INTERVAL
        head = self.queue[0]
        rest = len(self.queue) - 1
        log.info("snapshot%s %s%s", " (paused)" if self.paused else "", head.describe(),
                 f"; {rest} more table(s) queued" if rest else "")
