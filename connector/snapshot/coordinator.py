"""The incremental snapshot coordinator: DBLog's chunk windows beside the binlog stream.

For each chunk the source reads the low watermark, SELECTs the next chunk by key and reads
the high watermark; a window opens. While the stream is inside the window, every row change
of the chunked table drops the chunk row with that key (the change event carries newer
state). When the stream has applied every transaction up to the high watermark, the
remaining rows go out as op=r. A DDL on the chunked table discards the chunk; it is
selected again with new watermarks.

What a signal does to the state is `actions`'; every read of the replica is the `source`'s;
the records are the dispatcher's, reached through the `emit` callback (see `EmitRows`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from connector.config import ConnectorConfig
from connector.gtid import MariaDbGtidPos, MariaGtid
from connector.schema import TableSchema
from connector.snapshot import actions
from connector.snapshot.progress import TableProgress
from connector.snapshot.session import SqlError
from connector.snapshot.source import ChunkSource, SelectedChunk
from connector.snapshot.sql_errors import describe, is_connection_error
from connector.snapshot.state import SnapshotState
from connector.snapshot.tables import ChunkedTable, TableSkipped
from connector.snapshot.window import ChunkWindow
from signals.channel import ReceivedSignal
from signals.patterns import PatternTooSlow

log = logging.getLogger("gtidmark.snapshot")

PROGRESS_LOG_INTERVAL = 10.0

EmitRows = Callable[[TableSchema, list[dict[str, Any]], str, int], None]
"""Sends a closed window's rows as op=r records: `Dispatcher.emit_snapshot_rows`.

A callback rather than the Dispatcher itself: the dispatcher holds this coordinator (it
tells the open window about every row change while applying a transaction), so the
coordinator gets only the one function it calls, and the snapshot package imports neither
the dispatcher nor the sink.
"""


@dataclass(slots=True)
class _Open:
    """The open window and what closing it needs: the table's encoding, where to go next."""

    window: ChunkWindow
    table: ChunkedTable
    chunk: SelectedChunk
    opened_at: float


class SnapshotCoordinator:
    def __init__(self, config: ConnectorConfig, source: ChunkSource, emit: EmitRows) -> None:
        self._configured = (config.chunk_size, config.chunk_delay_ms)
        self._source = source
        self._emit = emit
        self.state = SnapshotState(chunk_size=config.chunk_size,
                                   chunk_delay_ms=config.chunk_delay_ms)
        self._open: _Open | None = None
        self._table: tuple[TableProgress, ChunkedTable] | None = None  # the head, prepared
        self.watched_table: str | None = None  # read by the dispatcher for every change
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

    @property
    def window_opened_at(self) -> float | None:
        return None if self._open is None else self._open.opened_at

    # -- offsets -----------------------------------------------------------------------

    def saved(self) -> SnapshotState | None:
        """The state for the offsets record; None when no snapshot runs."""
        return self.state.saved()

    def restore(self, saved: SnapshotState) -> None:
        size, delay = saved.throttle(self._configured)
        # Copies: `saved` is also the offsets store's last committed value.
        self.state = SnapshotState(id=saved.id, tables=[replace(t) for t in saved.tables],
                                   paused=saved.paused, chunk_size=size, chunk_delay_ms=delay,
                                   initial=saved.initial)
        if self.state.tables:
            log.info("snapshot %s resumes%s: %s", self.state.id,
                     " (paused)" if self.state.paused else "",
                     "; ".join(t.describe() for t in self.state.tables))

    def start_initial(self) -> None:
        actions.start_initial(self.state)

    # -- signals -----------------------------------------------------------------------

    def on_signal(self, received: ReceivedSignal) -> None:
        """Act on one signal and log one line saying what was done or why it was skipped."""
        signal = received.signal
        if signal is None:
            return  # the channel logged why it was skipped
        where = f"signal at offset {received.offset} ({signal.TYPE})"
        try:
            done = actions.act(self.state, signal, self._source)
        except (PatternTooSlow, actions.SnapshotRefused) as exc:
            log.warning("%s skipped: %s", where, exc)
        except SqlError as exc:
            self._source.close()
            log.warning("%s skipped: the replica refused a query (%s)", where, describe(exc))
        except Exception as exc:  # noqa: BLE001 - a signal must never stop streaming
            log.warning("%s skipped: unexpected %s", where, type(exc).__name__)
        else:
            log.info("%s: %s", where, done)
        if self._table is not None and self._head() is not self._table[0]:
            self._table = None  # its snapshot was stopped
            self._drop_window()

    # -- the stream's side ---------------------------------------------------------------

    def wants_cpu(self) -> bool:
        """True when the next chunk can be selected now (the engine should not idle)."""
        return self.state.active and not self.state.paused and self._open is None and \
            time.monotonic() >= self._next_chunk_at

    def on_row_change(self, table_id: str, gtid: MariaGtid, row: dict[str, Any]) -> None:
        opened = self._open
        if opened is not None and table_id == self.watched_table:
            opened.window.on_row_change(table_id, gtid, opened.table.binlog_key(row))

    def on_ddl(self, table_id: str, kind: str) -> None:
        if self._open is not None and self._open.window.table_id == table_id:
            log.info("DDL (%s) on %s while its chunk was buffered: selecting it again",
                     kind, table_id)
            self._drop_window()
            self.chunks_reselected += 1
        tables = self.state.tables
        if kind == "DROP" and any(t.table == table_id for t in tables):
            log.warning("table %s dropped during its snapshot; its snapshot ends", table_id)
            self.state.tables = [t for t in tables if t.table != table_id]
        head = self._head()
        if head is not None and head.table == table_id:
            self._table = None  # read the new columns before the next chunk

    def after_transaction(self, processed: MariaDbGtidPos, file: str = "", pos: int = 0) -> None:
        self._file, self._pos = file or self._file, pos or self._pos
        self._close_if_ready(processed)

    def step(self, processed: MariaDbGtidPos, caught_up: bool) -> None:
        """Open the next chunk's window when none is open; close it at once if ready."""
        if self._open is None and self.wants_cpu():
            self._open_next(processed)
        self._close_if_ready(processed)

    # -- the window's lifecycle ----------------------------------------------------------

    def _head(self) -> TableProgress | None:
        return self.state.tables[0] if self.state.tables else None

    def _open_next(self, processed: MariaDbGtidPos) -> None:
        try:
            if self.state.initial:
                self._queue_all_tables()
            prepared = self._prepared()
            if prepared is None:
                return
            progress, table = prepared
            chunk = self._source.select(progress, table, self.state.throttle(self._configured)[0])
        except SqlError as exc:
            head = self._head()
            self._source.close()
            if is_connection_error(exc) or head is None:
                log.warning("snapshot chunk of %s failed (%s); retrying in 1s",
                            "?" if head is None else head.table, describe(exc))
                self._next_chunk_at = time.monotonic() + 1.0
                return
            log.warning("snapshot of %s skipped: the replica refused its chunk query (%s)",
                        head.table, describe(exc))
            self._finish_table(skipped=True)
            return
        if chunk is None:
            self._table = None
            return
        window = ChunkWindow(chunk.table, chunk.rows, chunk.low, chunk.high)
        if not window.safe_to_open(processed):
            # The stream already emitted a transaction L does not hold: the SELECT may not
            # have seen it, and no later event would correct the chunk. Select again.
            window.discard()
            self._unsafe += 1
            self.chunks_reselected += 1
            if self._unsafe % 50 == 0:
                log.warning("low watermark %s keeps lagging the stream position %s "
                            "(%d retries); is the source a replica with gtid_slave_pos?",
                            chunk.low, processed, self._unsafe)
            self._next_chunk_at = time.monotonic() + min(0.001 * self._unsafe, 0.1)
            return
        self._unsafe = 0
        self._open = _Open(window, table, chunk, time.monotonic())
        self.watched_table = chunk.table
        self.chunks_opened += 1

    def _prepared(self) -> tuple[TableProgress, ChunkedTable] | None:
        """The queue's head ready for its next chunk; skipped and finished tables leave."""
        while (progress := self._head()) is not None:
            if self._table is None or self._table[0] is not progress:
                try:
                    self._table = (progress, self._source.prepare(progress))
                except TableSkipped as exc:
                    log.warning("snapshot of %s skipped: %s", progress.table, exc)
                    self._finish_table(skipped=True)
                    continue
            if progress.max_key == ():
                self._finish_table()
                continue
            return self._table
        return None

    def _queue_all_tables(self) -> None:
        tables = self._source.captured_tables()
        self.state.initial = False
        self.state.tables = [TableProgress(table=t) for t in tables]
        log.info("initial snapshot %s of %d tables: %s", self.state.id, len(tables),
                 ", ".join(tables) or "none")

    def _drop_window(self) -> None:
        if self._open is not None:
            self._open.window.discard()
        self._open = None
        self.watched_table = None

    def _close_if_ready(self, processed: MariaDbGtidPos) -> None:
        opened = self._open
        if opened is None or not opened.window.ready(processed):
            return
        self.rows_dropped += opened.window.dropped
        rows = opened.window.close()
        self._open = None
        self.watched_table = None
        progress = self.state.tables[0]
        # Keyed by the primary key even with a surrogate key (that one only orders chunks),
        # as Debezium does: one identity per row for compaction and upsert sinks.
        self._emit(opened.table.schema, rows, self._file, self._pos)
        progress.rows += len(rows)
        self.rows_scanned[progress.table] = progress.rows
        progress.last_key = opened.chunk.last_key
        # Key order is the server's collation, not Python's: compare only for equality.
        if (not opened.chunk.full or progress.last_key is None or
                progress.last_key == progress.max_key):
            self._finish_table()
        self._next_chunk_at = time.monotonic() + \
            self.state.throttle(self._configured)[1] / 1000.0

    def _finish_table(self, skipped: bool = False) -> None:
        progress = self.state.tables.pop(0)
        self._table = None
        if not skipped:
            log.info("snapshot of %s complete: %d rows in %.1fs", progress.table, progress.rows,
                     time.time() - progress.started)
            self.completed.append(progress.table)
        if not self.state.tables:
            log.info("snapshot %s finished", self.state.id)
            self.state.id = None

    def log_progress(self) -> None:
        now = time.monotonic()
        head = self._head()
        if head is None or now < self._next_log:
            return
        self._next_log = now + PROGRESS_LOG_INTERVAL
        rest = len(self.state.tables) - 1
        log.info("snapshot%s %s%s", " (paused)" if self.state.paused else "", head.describe(),
                 f"; {rest} more table(s) queued" if rest else "")
