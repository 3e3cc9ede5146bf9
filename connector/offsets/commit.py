"""The one sequence that moves the committed offsets: note, check leadership, write acked.

A state is noted at the sink's mark (the records produced before it), and written to the
offsets topic only once Kafka acknowledged all of those records. The main loop and a
paused connector check leadership first (`leading_at`); every record carries its writer's
epoch, so one written by a fenced leader is ignored on load. The start, the main loop, a
paused connector and the shutdown all commit this way.
"""

from __future__ import annotations

from collections.abc import Callable

from connector.kafka.sink import Sink
from connector.leadership.fencing import Leadership
from connector.offsets.store import OffsetStore
from connector.offsets.value import ConnectorOffsets


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
