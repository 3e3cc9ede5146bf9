"""What the engine shows the HTTP thread, and what the HTTP thread may ask of the engine.

The engine thread is the only one touching engine state: it publishes an immutable
`EngineView` now and then, and takes `Command`s from a queue between transactions. The HTTP
thread reads the latest view and puts commands; nothing else crosses. While the view is
UNASSIGNED (a standby, or not started yet) commands are refused at once, never queued: one
kept for later would act on whatever this instance leads next.

Both sides import this module and neither imports the other: the engine never loads
`connector.rest`, the HTTP package.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Literal

from connector.offsets.value import ConnectorOffsets

# Kafka Connect's connector/task states (AbstractStatus.State) this connector can be in.
State = Literal["UNASSIGNED", "RUNNING", "PAUSED", "STOPPED", "FAILED", "RESTARTING"]
CommandKind = Literal["pause", "resume", "stop", "restart", "alter-offsets", "reset-offsets"]


@dataclass(frozen=True)
class SnapshotView:
    """Incremental-snapshot numbers, as Debezium's snapshot metrics name them."""

    running: bool = False
    paused: bool = False
    completed: bool = False  # the last snapshot ran to its end
    aborted: bool = False  # the last snapshot was stopped by a signal (or its tables dropped)
    duration_s: float = 0.0  # start to end, or to now while it runs; 0 before any
    total_tables: int = 0  # tables any snapshot covered since the start, as Debezium counts
    remaining_tables: int = 0
    rows_scanned: dict[str, int] = field(default_factory=dict)
    chunk: int = 0  # ordinal of the current chunk in this snapshot
    window_open_s: float = 0.0  # how long the current chunk's window has been open
    chunks_reselected: int = 0
    rows_dropped: int = 0
    failed: tuple[tuple[str, str], ...] = ()  # (table, why) of snapshots that FAILED


@dataclass(frozen=True)
class EngineView:
    """One consistent reading of the engine, taken on the engine thread."""

    state: State = "UNASSIGNED"
    trace: str | None = None
    connected: bool = False
    queue_empty: bool = False
    gtids: str = ""
    events_seen: int = 0
    committed_transactions: int = 0
    behind_source_ms: int = -1  # lag of the last transaction applied; -1 before the first
    last_event_at: float | None = None  # time.monotonic() of the last transaction taken
    binlog_position: int = 0  # end of the last transaction applied, in its binlog file
    disconnects: int = 0  # binlog connections lost (each one is reconnected)
    events_filtered: int = 0  # rows events of tables the filters exclude
    events_skipped: int = 0  # writes on captured tables skipped under failure mode warn/skip
    queue_total: int = 0
    queue_remaining: int = 0
    producer_queue: int = 0
    acks_pending: int = 0
    commit_age_s: float = 0.0  # age of the oldest state not yet committed; 0 when none
    committed: ConnectorOffsets | None = None  # the offsets value last written
    snapshot: SnapshotView = field(default_factory=SnapshotView)
    taken_at: float = field(default_factory=time.monotonic)


def stop_first(name: str) -> str:
    """Kafka Connect's words when offsets are modified while the connector runs."""
    return ("Connectors must be in the STOPPED state before their offsets can be modified. "
            "This can be done for the specified connector by issuing a 'PUT' request to the "
            f"'/connectors/{name}/stop' endpoint")


# Kafka Connect's answer when a request cannot reach the leader (HerderRequestHandler), and why.
NOT_LEADING = ("Cannot complete request because of a conflicting operation (e.g. worker "
               "rebalance): this instance does not lead (a standby, or starting); send it to "
               "the active instance (`gtidmark status` shows it)")


class CommandRefused(Exception):
    """The engine refused a command; `status` and the message go back to the client."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Command:
    kind: CommandKind
    payload: Any = None
    reply: Future[Any] = field(default_factory=Future)


class EngineControl:
    """The only channel between the HTTP thread and the engine thread."""

    def __init__(self) -> None:
        self._view = EngineView()
        self._lock = threading.Lock()
        self._commands: queue.SimpleQueue[Command] = queue.SimpleQueue()
        self._arrived = threading.Event()
        # Sees every view published (the Supervisor's status topic writer), on its thread.
        self.on_publish: Callable[[EngineView], None] | None = None

    # -- engine side -----------------------------------------------------------------

    def publish(self, view: EngineView) -> None:
        """The view the HTTP thread answers from; an UNASSIGNED one refuses what waits."""
        with self._lock:
            self._view = view
            dropped = self.pending() if view.state == "UNASSIGNED" else []
        for command in dropped:
            command.reply.set_exception(CommandRefused(409, NOT_LEADING))
        if self.on_publish is not None:
            self.on_publish(view)

    def pending(self) -> list[Command]:
        """Commands sent since the last call, in order (never blocks)."""
        out: list[Command] = []
        while True:
            try:
                out.append(self._commands.get_nowait())
            except queue.Empty:
                return out

    def wait(self, timeout: float) -> None:
        """Sleep up to `timeout` s, less when a command arrives (it stays queued)."""
        self._arrived.wait(timeout)
        self._arrived.clear()

    # -- HTTP side -------------------------------------------------------------------

    def view(self) -> EngineView:
        with self._lock:
            return self._view

    def send(self, kind: CommandKind, payload: Any = None) -> Future[Any]:
        """Queue a command for the engine; CommandRefused (409) while not leading."""
        command = Command(kind, payload)
        with self._lock:
            if self._view.state == "UNASSIGNED":
                raise CommandRefused(409, NOT_LEADING)
            self._commands.put(command)
        self._arrived.set()
        return command.reply
