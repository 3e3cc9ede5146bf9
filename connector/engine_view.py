"""What the engine shows the REST server and /metrics: one immutable view per refresh."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from connector.control import EngineView, SnapshotView

if TYPE_CHECKING:
    from connector.engine import Engine


def engine_view(engine: Engine) -> EngineView:
    """The engine as the REST server and /metrics show it (built on the engine's thread)."""
    snap = engine.snapshots
    state = snap.state
    scanned = {**snap.rows_scanned, **{t.table: t.rows for t in state.tables}}
    opened = snap.window_opened_at
    reader = engine.reader
    meter = snap.meter
    dispatcher = engine.dispatcher
    return EngineView(
        state="PAUSED" if engine.paused else "RUNNING",
        connected=reader is not None and reader.connected.is_set(),
        queue_empty=len(engine.queue) == 0, gtids=str(engine.position),
        events_seen=dispatcher.rows_out, committed_transactions=engine.transactions,
        behind_source_ms=engine.behind_source_ms, last_event_at=engine.last_event_at,
        binlog_position=engine.pos, disconnects=0 if reader is None else reader.disconnects,
        events_filtered=dispatcher.events_filtered,
        events_skipped=dispatcher.events_skipped, queue_total=engine.queue.capacity,
        queue_remaining=engine.queue.remaining, producer_queue=engine.sink.in_flight(),
        acks_pending=engine.sink.produced - 1 - engine.sink.acked_through,
        commit_age_s=engine.offsets.uncommitted_age(), committed=engine.offsets.committed,
        snapshot=SnapshotView(
            running=state.active and not state.paused,
            paused=state.active and state.paused, completed=meter.completed,
            aborted=meter.aborted, duration_s=meter.duration_s(),
            total_tables=len(meter.tables), remaining_tables=len(state.tables),
            rows_scanned=scanned, chunk=snap.chunks_opened,
            window_open_s=0.0 if opened is None else time.monotonic() - opened,
            chunks_reselected=snap.chunks_reselected, rows_dropped=snap.rows_dropped,
            failed=tuple((f.table, f.reason) for f in state.failed)))
