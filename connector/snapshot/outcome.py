"""What the snapshot tells people: progress, how a table ends (complete, or FAILED and why),
and the snapshot's end, "finished" only when no table of it FAILED (rows not all sent)."""

from __future__ import annotations

import logging
import time

from connector.snapshot.meter import SnapshotMeter
from connector.snapshot.progress import TableProgress
from connector.snapshot.state import FailedTable, SnapshotState

log = logging.getLogger("gtidmark.snapshot")


def progress_line(state: SnapshotState) -> str | None:
    """The head table's progress; None before its bounds are read ("0/0 rows, 100%")."""
    head = state.tables[0] if state.tables else None
    if head is None or head.max_key is None:
        return None
    rest = len(state.tables) - 1
    return (f"snapshot{' (paused)' if state.paused else ''} {head.describe()}"
            + (f"; {rest} more table(s) queued" if rest else ""))


def table_ended(state: SnapshotState, meter: SnapshotMeter, progress: TableProgress,
                failed: str | None) -> None:
    """`progress`, just taken off `state`'s queue, is done (`failed`: why it FAILED)."""
    if failed is not None:
        log.error("snapshot of %s FAILED after %d rows: %s; its other rows were not sent",
                  progress.table, progress.rows, failed)
        state.forget_failed({progress.table})
        state.failed.append(FailedTable(progress.table, failed, state.id,
                                        round(time.time(), 3)))
    else:
        log.info("snapshot of %s complete: %d rows in %.1fs", progress.table, progress.rows,
                 time.time() - progress.started)
    if state.tables:
        return
    failures = [f.table for f in state.failed if f.snapshot == state.id]
    if failures:
        log.error("snapshot %s ended; FAILED: %s", state.id, ", ".join(failures))
    else:
        log.info("snapshot %s finished", state.id)
    meter.finished(failed=bool(failures))
    state.id = None
