"""Resuming inside a transaction from Debezium's offsets: its `event` and `row`.

Debezium's binlog connector (BinlogStreamingChangeEventSource, BinlogOffsetContext) writes,
with each change record of a transaction, the GTID set before the transaction and
`event`: how many binlog events of it were complete, counting from its BEGIN (MySQL's
BEGIN query, MariaDB's GTID event) as the first, every event after it counted (table maps,
MariaDB's ANNOTATE_ROWS, MySQL's ROWS_QUERY, rows events); `row`: the rows of the event in
progress already sent. Resuming, it skips the rows of the first `event` events of the first
transaction streamed, then the first `row` rows of the next rows event. Without this the
transaction's first changes were sent twice.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MidTransaction"]


@dataclass(slots=True)
class MidTransaction:
    """Where a resumed stream starts inside its first transaction (one per start)."""

    events: int  # Debezium's `event`
    rows: int  # Debezium's `row`
    ordinal: int = -1  # the current event's number since the BEGIN (0), -1 before it
    done: bool = False

    @property
    def pending(self) -> bool:
        return not self.done and (self.events > 0 or self.rows > 0)

    def begin(self) -> None:
        """The first transaction's BEGIN (MariaDB: its GTID event): event 0."""
        if self.pending and self.ordinal < 0:
            self.ordinal = 0

    def reconnected(self) -> None:
        """The stream opened again: the server sends the first transaction from its start."""
        if not self.done:
            self.ordinal = -1

    def next_event(self) -> None:
        """Any later event of the first transaction (one the stream reads, or skips)."""
        if self.pending and self.ordinal >= 0:
            self.ordinal += 1

    def rows_to_drop(self, count: int) -> int:
        """How many of the current rows event's `count` rows were sent already."""
        if not self.pending or self.ordinal < 0:
            return 0
        if self.ordinal < self.events:
            return count
        self.done = True  # the first rows event from `event` on: `row` of its rows
        return min(self.rows, count)

    def end(self) -> None:
        """The first transaction ended: later ones are streamed whole."""
        if self.ordinal >= 0:
            self.done = True
