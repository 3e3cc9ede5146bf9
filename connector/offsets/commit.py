"""The one sequence that moves the committed offsets: note, check leadership, write acked.

A state is noted at the sink's mark (the records produced before it), and written to the
offsets topic only once Kafka acknowledged all of those records. The main loop and a
paused connector check leadership first (`leading_at`); every record carries its writer's
epoch, so one written by a fenced leader is ignored on load. The start, the main loop, a
paused connector and the shutdown all commit this way.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from connector.kafka.sink import Sink
from connector.kafka.transactions import TransactionalSink
from connector.leadership.fencing import Leadership
from connector.offsets.store import OffsetStore
from connector.offsets.value import ConnectorOffsets

COMMIT_TIMEOUT_S = 60.0
QUICK_COMMIT_IN_FLIGHT = 1_000
MAX_DEFER_S = 0.5  # a transaction's commit, retried within it while retriable


class Committer:
    """Commits the engine's state (`state` reads it) through its sink's acknowledgements."""

    def __init__(self, offsets: OffsetStore, sink: Sink, leadership: Leadership,
                 state: Callable[[], ConnectorOffsets]) -> None:
        self._offsets = offsets
        self._sink = sink
        self._leadership = leadership
        self._state = state

    def commit(self, note: bool = True, leading_at: float | None = None) -> bool:
        """Note the state now (`note`), check leadership at `leading_at` (SteppedDown when
        lost), then write the newest noted state whose records are acked; True if written."""
        if note:
            self._offsets.checkpoint(self._sink.mark(), self._state())
        if leading_at is not None:
            self._leadership.check(leading_at)
        return self._offsets.commit_acked(self._sink)

    @property
    def commit_pending(self) -> bool:
        """Records wait for a commit a later pass makes (only with exactly once)."""
        return False

    def transaction_end(self) -> None:
        """A source transaction ended (exactly once commits there with `connector`)."""


class TransactionalCommitter:
    """Exactly once (KIP-618): commits the Kafka transaction with the offsets record of the
    state it leaves, at `transaction.boundary`'s points, never inside a source transaction
    sent in pieces (its offsets would say "before it" while some of it is committed).

    poll: at every pass of the engine loop that sent something; interval: every
    `transaction.boundary.interval.ms`; connector: after every source transaction (and
    every snapshot chunk), so a read_committed consumer sees a database transaction whole.
    """

    def __init__(self, offsets: OffsetStore, sink: TransactionalSink, leadership: Leadership,
                 state: Callable[[], ConnectorOffsets], boundary: str, interval_s: float,
                 source_open: Callable[[], bool]) -> None:
        self._offsets = offsets
        self._sink = sink
        self._leadership = leadership
        self._state = state
        self._per_transaction = boundary == "connector"
        self._interval_s = interval_s if boundary == "interval" else 0.0
        self._source_open = source_open
        self._due = time.monotonic() + self._interval_s
        self._began = time.monotonic()

    def commit(self, note: bool = True, leading_at: float | None = None) -> bool:
        """Commit the open transaction if a boundary is due, in the background; at a start,
        a pause or a shutdown (`leading_at` None) always, and wait for it. True if begun."""
        if leading_at is None:
            return self._commit(wait=True)
        self._leadership.check(leading_at)
        if time.monotonic() < self._due:
            self._sink.settle(wait=False)
            return False
        return self._commit(wait=False)

    @property
    def commit_pending(self) -> bool:
        """A commit runs, or records sent wait for one: the engine's next pass comes soon
        (not after an idle wait), so the last records do not wait 0.1 s to be visible."""
        return self._sink.committing or (self._sink.in_transaction > 0
                                         and time.monotonic() >= self._due)

    def transaction_end(self) -> None:
        """A source transaction ended: its own Kafka transaction with `connector`."""
        if self._per_transaction:
            self._commit(wait=False)

    def _commit(self, wait: bool) -> bool:
        if wait:
            self._sink.settle(wait=True)
        elif self._sink.committing or (self._sink.in_flight() > QUICK_COMMIT_IN_FLIGHT
                                       and time.monotonic() < self._began + MAX_DEFER_S):
            return False  # a boundary reached while a commit runs: the next pass takes it
        if self._source_open():
            return False
        state = self._state()
        if not self._sink.in_transaction and state == self._offsets.committed:
            return False
        self._sink.commit(self._offsets.record(state), COMMIT_TIMEOUT_S,
                          lambda: self._offsets.committed_in_transaction(state), wait=wait)
        self._began = time.monotonic()
        self._due = self._began + self._interval_s
        return True
