"""The incremental snapshot coordinator: DBLog's chunk windows beside the binlog stream.

For each chunk the chunk reader reads the low watermark, SELECTs the chunk by key and reads
the high watermark; a window opens. While the stream is inside the window, every row change
of the chunked table drops the chunk row with that key (the change event carries newer
state). When the stream has applied every transaction up to the high watermark, the
remaining rows go out as op=r. A DDL on the chunked table discards the chunk; it is
selected again with new watermarks.

The reader works one chunk ahead, in its own process (chunk_reader.py): when a window
opens, the next chunk is asked for. By the time it opens, the stream may have emitted
changes its L does not hold; the keys the stream touched since the chunk was asked for
(`RecentChanges`) are replayed into its window, which drops those rows. Pieces of a large
transaction that went out before the table's first request were not kept: a window opens
only once its L holds that transaction.

What a signal does to the state is `actions`'; a signal's catalog reads are the `source`'s;
a table's chunking and largest key are the chunk reader's too (table_reads.py), so the
stream never waits on a snapshot query of a table; the records are the dispatcher's,
reached through the `emit` callback (see `EmitRows`).
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from connector.events.envelope import RowEncoding
from connector.gtid import Gtid, Position
from connector.schema import TableSchema
from connector.settings.model import ConnectorConfig
from connector.snapshot import actions, outcome
from connector.snapshot.chunk_budget import ChunkSizer
from connector.snapshot.chunk_reader import Answer, ChunkReader, ChunkReadFailed
from connector.snapshot.meter import SnapshotMeter
from connector.snapshot.progress import TableProgress
from connector.snapshot.retries import ReadRetries
from connector.snapshot.session import SqlError
from connector.snapshot.source import ChunkRequest, ChunkSource, ColumnsChanged, SelectedChunk
from connector.snapshot.sql_errors import describe, error_code
from connector.snapshot.state import SnapshotState
from connector.snapshot.table_reads import TableRead, TableRefused, TableRequest
from connector.snapshot.tables import ChunkedTable
from connector.snapshot.window import ChunkWindow, RecentChanges
from signals.channel import ReceivedSignal
from signals.patterns import PatternTooSlow

log = logging.getLogger("gtidmark.snapshot")

PROGRESS_LOG_INTERVAL = 10.0

EmitRows = Callable[[TableSchema, list[Any], str, int], None]
"""Sends a closed window's rows (dicts, or `ReadRow`s) as op=r records:
`Dispatcher.emit_snapshot_rows`.

A callback rather than the Dispatcher itself: the dispatcher holds this coordinator (it
tells the open window about every row change while applying a transaction), so the
coordinator gets only the one function it calls, and the snapshot package imports neither
the dispatcher nor the sink.
"""
Encoding = Callable[[TableSchema], RowEncoding | None]
"""How the chunk reader encodes a table's rows as the dispatcher's encoder would (None: it
does not; the dispatcher encodes the row dicts)."""


@dataclass(slots=True)
class _Open:
    """The open window and what closing it needs: the table's encoding, where to go next."""

    window: ChunkWindow[Any]
    table: ChunkedTable
    chunk: SelectedChunk
    opened_at: float


class SnapshotCoordinator:
    def __init__(self, config: ConnectorConfig, source: ChunkSource, reader: ChunkReader,
                 encoding: Encoding, emit: EmitRows) -> None:
        self._configured = (config.chunk_size, config.chunk_delay_ms)
        self._source = source
        self._reader = reader
        self._encoding = encoding
        self._emit = emit
        self._numbers = itertools.count(1)
        self._asked: ChunkRequest | TableRequest | None = None  # whose answer comes next
        self._recent: RecentChanges | None = None  # the head table's keys since a request
        self._keyed: ChunkedTable | None = None  # how the watched table's binlog rows key
        self._reading: Gtid | None = None  # a transaction of which pieces went out, not ended
        self.state = SnapshotState(chunk_size=config.chunk_size,
                                   chunk_delay_ms=config.chunk_delay_ms)
        self._open: _Open | None = None
        self._table: tuple[TableProgress, ChunkedTable] | None = None  # the head, prepared
        self.watched_table: str | None = None  # read by the dispatcher for every change
        self._next_chunk_at = 0.0
        self._sizer: ChunkSizer | None = None  # the watched table's, per table read
        self._unsafe = 0
        self._retries = ReadRetries()  # the head table's reads that failed in a row
        self._next_log = 0.0
        self._file = ""
        self._pos = 0
        self.completed: list[str] = []
        # Read by the metrics: chunks opened, re-selected, rows dropped, rows out per table.
        self.chunks_opened = 0
        self.chunks_reselected = 0
        self.rows_dropped = 0
        self.rows_scanned: dict[str, int] = {}
        self.meter = SnapshotMeter()

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
                                   initial=saved.initial, failed=list(saved.failed))
        self.meter.observe(self.state)
        if self.state.tables:
            log.info("snapshot %s resumes%s: %s", self.state.id,
                     " (paused)" if self.state.paused else "",
                     "; ".join(t.describe() for t in self.state.tables))

    def start_initial(self) -> None:
        actions.start_initial(self.state)

    # -- signals -----------------------------------------------------------------------

    def on_signal(self, received: ReceivedSignal) -> None:
        """Act on one signal and log one line saying what was done or why it was skipped;
        actions.ActionDeferred when it is to be acted on later (the replica away)."""
        signal = received.signal
        if signal is None:
            return  # the channel logged why it was skipped
        where = f"{received.where} ({signal.TYPE})"
        try:
            done = actions.act(self.state, signal, self._source)
        except (PatternTooSlow, actions.SnapshotRefused) as exc:
            log.warning("%s skipped: %s", where, exc)
        except SqlError as exc:
            self._source.close()
            if actions.deferrable(signal, exc):
                raise actions.ActionDeferred(f"{where}: the replica refused a query "
                                             f"({describe(exc)})") from None
            log.warning("%s skipped: the replica refused a query (%s)", where, describe(exc))
        except Exception as exc:  # noqa: BLE001 - a signal must never stop streaming
            log.warning("%s skipped: unexpected %s", where, type(exc).__name__)
        else:
            log.info("%s: %s", where, done)
        self.meter.observe(self.state)
        if self._table is not None and self._head() is not self._table[0]:
            self._table = None  # its snapshot was stopped
            self._drop_window()

    # -- the stream's side ---------------------------------------------------------------

    def wants_cpu(self) -> bool:
        """True when a chunk can be asked for or opened now (the engine should not idle);
        while the reader works on one, its answer wakes the engine."""
        return self.state.active and not self.state.paused and self._open is None and \
            time.monotonic() >= self._next_chunk_at and \
            (self._asked is None or self._reader.has_answer())

    def on_row_change(self, table_id: str, gtid: Gtid, row: dict[str, Any]) -> None:
        """A row of the watched table changed: the open window and the history hear of it."""
        keyed = self._keyed
        if keyed is None or table_id != self.watched_table:
            return
        key = keyed.binlog_key(row)
        if self._recent is not None:
            self._recent.record(table_id, gtid, key)
        if self._open is not None:
            self._open.window.on_row_change(table_id, gtid, key)

    def on_ddl(self, table_id: str, kind: str) -> None:
        if self.watched_table == table_id:
            if self._open is not None:
                log.info("DDL (%s) on %s while its chunk was buffered: selecting it again",
                         kind, table_id)
                self.chunks_reselected += 1
            self._drop_window()  # an asked chunk may hold the old columns: ask again
        tables = self.state.tables
        if kind == "DROP" and any(t.table == table_id for t in tables):
            log.warning("table %s dropped during its snapshot; its snapshot ends", table_id)
            self.state.tables = [t for t in tables if t.table != table_id]
            self.meter.observe(self.state)
        if kind in ("DROP", "RENAME"):
            self.state.forget_failed({table_id})  # no rows of it are missing any more
        head = self._head()
        if head is not None and head.table == table_id:
            self._table = None  # read the new columns before the next chunk
            if isinstance(self._asked, TableRequest):
                self._asked = None  # they may be the old ones

    def after_piece(self, gtid: Gtid) -> None:
        """A piece of a large transaction went out; it has not ended (the position stays)."""
        self._reading = gtid

    def after_transaction(self, processed: Position, file: str = "", pos: int = 0) -> None:
        self._file, self._pos = file or self._file, pos or self._pos
        self._reading = None
        if self._recent is not None:
            self._recent.end_transaction(processed)
        self._close_if_ready(processed)

    def step(self, processed: Position, caught_up: bool) -> None:
        """Ask for the next chunk, or open its window once it is read; close it if ready."""
        if self._open is None and self.wants_cpu():
            self._open_next(processed)
        self._close_if_ready(processed)

    def close(self) -> None:
        """Stop the chunk reader process (the engine is stopping)."""
        self._reader.close()

    # -- the window's lifecycle ----------------------------------------------------------

    def _head(self) -> TableProgress | None:
        return self.state.tables[0] if self.state.tables else None

    def _open_next(self, processed: Position) -> None:
        try:
            if self.state.initial:
                self._queue_all_tables()
        except SqlError as exc:
            self._source.close()
            self._read_failed(error_code(exc), describe(exc))
            return
        progress = self._ready_head()
        if progress is None:
            return
        if self._asked is None:
            if self._table is None or self._table[0] is not progress:
                self._ask_table(progress)  # its chunking (and bounds) first, off the stream
            else:
                self._ask(progress, self._table[1], progress.last_key, processed)
        asked = self._asked
        answer = self._answer()
        if answer is None:
            return
        if isinstance(answer, TableRead | TableRefused):
            if isinstance(asked, TableRequest) and asked.progress.table == progress.table:
                self._table_read(progress, answer, processed)
            return  # else a signal stopped that table's snapshot meanwhile: ask for the head
        if isinstance(answer, ChunkReadFailed):
            if answer.fatal:
                raise RuntimeError(f"snapshot chunk of {progress.table}: {answer.reason}")
            self._read_failed(answer.code, answer.reason)
            return
        if isinstance(answer, ColumnsChanged):
            log.info("columns of %s changed since its schema was read; reading it again",
                     progress.table)
            self._table = None
            return
        if self._table is None:
            return  # a DDL came after the request: the table is read again
        self._open_window(answer, progress, self._table[1], processed)

    def _ask_table(self, progress: TableProgress) -> None:
        self._table = None
        self._asked = TableRequest(next(self._numbers), replace(progress),
                                   measure=progress.max_key is None)
        self._reader.request(self._asked)

    def _table_read(self, progress: TableProgress, answer: TableRead | TableRefused,
                    processed: Position) -> None:
        """The head's chunking is read: ask for its next chunk (or fail the table)."""
        if isinstance(answer, TableRefused):
            self._finish_table(failed=answer.reason)
            return
        table = answer.chunked()
        self._table = (progress, table)
        if answer.bounds is not None:
            progress.max_key, progress.estimate = answer.bounds
            progress.started = time.time()
            log.info("snapshot of %s starts: about %d rows, key %s", progress.table,
                     progress.estimate, ", ".join(table.key_columns))
        if progress.max_key != ():
            self._ask(progress, table, progress.last_key, processed)

    def _ask(self, progress: TableProgress, table: ChunkedTable, after: Any,
             processed: Position) -> None:
        """Ask the reader for the chunk after `after`; the stream's keys are kept from now."""
        if self._recent is None or self.watched_table != progress.table:
            # The keys of pieces already out are unknown: L must hold their transaction.
            self._recent = RecentChanges(processed, self._reading)
        self.watched_table, self._keyed = progress.table, table
        if self._sizer is None or self._sizer.schema is not table.schema:
            self._sizer = ChunkSizer(table.schema)  # a table read anew: sized anew
        self._asked = ChunkRequest(
            number=next(self._numbers), table=progress.table,
            columns=tuple(c.name for c in table.schema.columns),
            key_columns=table.key_columns, condition=table.condition, after=after,
            limit=self._sizer.rows(self.state.throttle(self._configured)[0]),
            encoding=self._encoding(table.schema), streamed=processed,
            exact_keys=table.exact_keys)
        self._reader.request(self._asked)

    def _answer(self) -> Answer | None:
        """The answer to the asked request (answers to forgotten ones are dropped)."""
        while (answer := self._reader.answer()) is not None:
            if self._asked is not None and answer.number == self._asked.number:
                self._asked = None
                return answer
        return None

    def _open_window(self, chunk: SelectedChunk, progress: TableProgress, table: ChunkedTable,
                     processed: Position) -> None:
        if self._sizer is not None:
            self._sizer.observe(len(chunk.rows), chunk.size)
        if chunk.after != progress.last_key or self._recent is None:
            return  # read ahead of a chunk that did not close: ask again
        window = ChunkWindow(chunk.table, chunk.rows, chunk.low, chunk.high)
        if not self._recent.replay_into(window, processed):
            # L is older than the keys kept: the SELECT may have missed a change the stream
            # already emitted, and no later event would correct it. Select again.
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
        self._retries.succeeded()
        self._recent.forget_covered(chunk.low)
        self._open = _Open(window, table, chunk, time.monotonic())
        self.chunks_opened += 1
        delay = self.state.throttle(self._configured)[1]
        if chunk.full and not delay and chunk.last_key != progress.max_key:
            self._ask(progress, table, chunk.last_key, processed)  # read ahead

    def _read_failed(self, code: int | None, reason: str) -> None:
        """Read the head table again after a backoff, or fail its snapshot (`retries`)."""
        head = self._head()
        delay = self._retries.failed(code, None if head is None else head.table, reason)
        if delay is None:
            self._finish_table(failed=f"{reason}, {self._retries.tries()}")
            return
        self._table = None  # read its columns again too: a DDL may be why
        self._next_chunk_at = time.monotonic() + delay

    def _ready_head(self) -> TableProgress | None:
        """The queue's head; tables found empty leave (complete, 0 rows)."""
        while (progress := self._head()) is not None and progress.max_key == ():
            self._finish_table()
        return progress

    def _queue_all_tables(self) -> None:
        tables = self._source.captured_tables()
        self.state.initial = False
        self.state.tables = [TableProgress(table=t) for t in tables]
        self.meter.observe(self.state)
        if not tables:
            self.meter.finished()
        log.info("initial snapshot %s of %d tables: %s", self.state.id, len(tables),
                 ", ".join(tables) or "none")

    def _drop_window(self) -> None:
        """Forget the open window, the asked chunk and the kept keys (ask afresh)."""
        if self._open is not None:
            self._open.window.discard()
        self._open = self._asked = self._recent = self._keyed = None
        self.watched_table = None

    def _close_if_ready(self, processed: Position) -> None:
        opened = self._open
        if opened is None or not opened.window.ready(processed):
            return
        self.rows_dropped += opened.window.dropped
        rows = opened.window.close()
        self._open = None
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

    def _finish_table(self, failed: str | None = None) -> None:
        """The head table is done: complete, or FAILED (`failed`: why)."""
        progress = self.state.tables.pop(0)
        self._table = None
        self._drop_window()
        self._retries.succeeded()
        if failed is None:
            self.completed.append(progress.table)
        outcome.table_ended(self.state, self.meter, progress, failed)

    def log_progress(self) -> None:
        now = time.monotonic()
        if now >= self._next_log and (line := outcome.progress_line(self.state)):
            self._next_log = now + PROGRESS_LOG_INTERVAL
            log.info("%s", line)
