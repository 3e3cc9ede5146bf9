"""The in-progress mark of a signal, as the offsets record carries it (signal_mark.py).

Flat fields of the offsets value (Kafka Connect's reader drops a map in an offsets value).
A signal of the topic: `signal_in_progress`, its offset, and `signal_attempt`, how many
starts have begun acting on it, the one that wrote the mark included (marks written before
the count existed have no `signal_attempt` and read as attempt 1). A row of the signal
table (the source channel): `signal_source_gtid`, the transaction that INSERTed it,
`signal_source_row`, its index among that transaction's signal rows, and
`signal_source_attempt`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# A signal is skipped, unread, after this many starts each ended while acting on it: the
# OOM killer or a segfault on every attempt is the signal, one kill or takeover is not.
MAX_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class SignalMark:
    """The signal at `offset` is being acted on, by the `attempt`-th start to do so."""

    offset: int
    attempt: int = 1

    @property
    def exhausted(self) -> bool:
        """Every allowed start died acting on it: the next one skips it."""
        return self.attempt >= MAX_ATTEMPTS

    def next_attempt(self) -> SignalMark:
        return SignalMark(self.offset, self.attempt + 1)

    def previous_attempt(self) -> SignalMark | None:
        return None if self.attempt <= 1 else SignalMark(self.offset, self.attempt - 1)

    def to_json(self) -> dict[str, Any]:
        return {"signal_in_progress": self.offset, "signal_attempt": self.attempt}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SignalMark | None:
        """The mark in an offsets value, None when it has none."""
        offset = data.get("signal_in_progress")
        if offset is None:
            return None
        return cls(int(offset), max(1, int(data.get("signal_attempt") or 1)))


@dataclass(frozen=True, slots=True)
class SourceMark:
    """Signal row `row` of transaction `gtid` is being acted on, by the `attempt`-th start."""

    gtid: str
    row: int
    attempt: int = 1

    @property
    def exhausted(self) -> bool:
        return self.attempt >= MAX_ATTEMPTS

    def next_attempt(self) -> SourceMark:
        return SourceMark(self.gtid, self.row, self.attempt + 1)

    def previous_attempt(self) -> SourceMark | None:
        return None if self.attempt <= 1 else SourceMark(self.gtid, self.row, self.attempt - 1)

    def to_json(self) -> dict[str, Any]:
        return {"signal_source_gtid": self.gtid, "signal_source_row": self.row,
                "signal_source_attempt": self.attempt}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SourceMark | None:
        """The source signal's mark in an offsets value, None when it has none."""
        gtid = data.get("signal_source_gtid")
        if not gtid:
            return None
        return cls(str(gtid), int(data.get("signal_source_row") or 0),
                   max(1, int(data.get("signal_source_attempt") or 1)))
