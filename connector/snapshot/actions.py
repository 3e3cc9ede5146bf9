"""Signal actions on the snapshot state: execute, stop, pause, resume, set-throttle, log.

Debezium's signal actions: each changes only the `SnapshotState`; reading the catalog (which
tables are captured, whether a filter may run) is the `TableCatalog`'s, and what the change
means for an open chunk window is the coordinator's.
"""

from __future__ import annotations

import uuid
from typing import Protocol

from connector.snapshot.requests import MAX_STATE_BYTES, plan_snapshot
from connector.snapshot.sql_errors import STATEMENT_TIMEOUTS, error_code, is_connection_error
from connector.snapshot.state import SnapshotState
from signals.models import (
    ExecuteSnapshot,
    Log,
    PauseSnapshot,
    ResumeSnapshot,
    SetThrottle,
    Signal,
    StopSnapshot,
)
from signals.patterns import MatchBudget, collection_matches


class SnapshotRefused(ValueError):
    """A snapshot signal that cannot be acted on; the message is its one log line."""


class ActionDeferred(RuntimeError):
    """The signal could not be acted on for a reason that passes (the replica away, a
    statement killed or timed out): it is acted on again later, not skipped."""


QUERY_INTERRUPTED = 1317  # KILL QUERY by a DBA


def deferrable(signal: Signal, exc: BaseException) -> bool:
    """An execute-snapshot whose catalog read failed on the connection or a statement
    killed or timed out: the same read may succeed later."""
    code = error_code(exc)
    return isinstance(signal, ExecuteSnapshot) and (
        is_connection_error(exc) or code in STATEMENT_TIMEOUTS or code == QUERY_INTERRUPTED)


class TableCatalog(Protocol):
    def captured_tables(self) -> list[str]:
        """Every base table the connector captures, as db.table, sorted."""

    def condition_refused(self, table: str, condition: str) -> str | None:
        """Why `condition` may not run on `table`, or None."""


def act(state: SnapshotState, signal: Signal, catalog: TableCatalog) -> str:
    """Apply `signal` to `state` and say what was done in one line.

    Raises SnapshotRefused, signals.patterns.PatternTooSlow, or a server error of the catalog.
    """
    if isinstance(signal, ExecuteSnapshot):
        return execute(state, signal, catalog)
    if isinstance(signal, StopSnapshot):
        return stop(state, signal.data_collections)
    if isinstance(signal, PauseSnapshot | ResumeSnapshot):
        state.paused = isinstance(signal, PauseSnapshot)
        return "snapshot paused" if state.paused else "snapshot resumed"
    if isinstance(signal, SetThrottle):
        if signal.chunk_size is not None:
            state.chunk_size = signal.chunk_size
        if signal.chunk_delay_ms is not None:
            state.chunk_delay_ms = signal.chunk_delay_ms
        return (f"snapshot throttle: chunk size {state.chunk_size}, "
                f"delay {state.chunk_delay_ms} ms")
    assert isinstance(signal, Log)
    return "signal log: " + signal.message.replace("\r", "\\r").replace("\n", "\\n")


def execute(state: SnapshotState, signal: ExecuteSnapshot, catalog: TableCatalog) -> str:
    """Queue the signal's tables behind those already queued; one snapshot id for them all."""
    if signal.snapshot_type != "incremental":
        raise SnapshotRefused(f"type {signal.snapshot_type!r} refused: only incremental "
                              "snapshots run (streaming never stops)")
    queued = {t.table for t in state.tables}
    plan = plan_snapshot(signal, catalog.captured_tables(), queued, catalog.condition_refused)
    if not plan.added:
        raise SnapshotRefused(plan.summary())
    if SnapshotState(tables=[*state.tables, *plan.added]).json_size() > MAX_STATE_BYTES:
        raise SnapshotRefused(f"the snapshot queue would exceed {MAX_STATE_BYTES} bytes "
                              "in the offsets (too many tables or filters too long)")
    state.tables += plan.added
    state.forget_failed({t.table for t in plan.added})
    state.id = state.id or signal.id or str(uuid.uuid4())
    return f"snapshot {state.id}: {plan.summary()}"


def stop(state: SnapshotState, collections: list[str]) -> str:
    """Drop the tables matching `collections` from the queue (all of them if empty), and
    their FAILED marks: the user knows."""
    if not collections:
        stopped = [t.table for t in state.tables]
        state.tables.clear()
        state.initial = False
        state.failed = []
    else:
        budget = MatchBudget()
        stopped = [t.table for t in state.tables
                   if any(collection_matches(p, t.table, budget) for p in collections)]
        state.tables = [t for t in state.tables if t.table not in stopped]
        state.forget_failed({f.table for f in state.failed
                             if any(collection_matches(p, f.table, budget) for p in collections)})
    return f"snapshot stopped for {', '.join(stopped) or 'nothing (none running)'}"


def start_initial(state: SnapshotState) -> None:
    """snapshot.mode=initial: every captured table, listed when the first chunk is due."""
    state.initial = True
    state.id = f"initial-{uuid.uuid4()}"
