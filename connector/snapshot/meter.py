"""The incremental snapshot's lifecycle as Debezium's SnapshotMeter keeps it, for /metrics.

Debezium marks a snapshot started when its tables are known, completed when the last one is
read, aborted when a stop signal empties it (here also when a table's snapshot FAILED: it
did not complete); a new one clears both flags. Its table count only
grows: every table any snapshot covered since the connector started.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from connector.snapshot.state import SnapshotState


@dataclass(slots=True)
class SnapshotMeter:
    tables: set[str] = field(default_factory=set)
    running: bool = False  # between start and completion/abort (paused included)
    completed: bool = False
    aborted: bool = False
    started_at: float = 0.0  # time.monotonic(); 0 before any snapshot
    stopped_at: float = 0.0  # 0 while one runs

    def observe(self, state: SnapshotState) -> None:
        """After whatever may start or stop a snapshot: a signal, a restore, the table list."""
        self.tables.update(t.table for t in state.tables)
        if state.tables and not self.running:
            self.running, self.completed, self.aborted = True, False, False
            self.started_at, self.stopped_at = time.monotonic(), 0.0
        elif self.running and not state.active:
            self._stop(completed=False)

    def finished(self, failed: bool = False) -> None:
        """The last table was read (or there was none to read); `failed`: not all of them."""
        if not self.running:
            self.started_at = time.monotonic()
        self._stop(completed=not failed)

    def duration_s(self) -> float:
        """Start to end, or to now while it runs (Debezium's SnapshotDurationInSeconds)."""
        if not self.started_at:
            return 0.0
        return (self.stopped_at or time.monotonic()) - self.started_at

    def _stop(self, completed: bool) -> None:
        self.running, self.completed, self.aborted = False, completed, not completed
        self.stopped_at = time.monotonic()
