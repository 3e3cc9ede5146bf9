"""The in-progress mark of a signal, as the offsets record carries it (signal_mark.py).

Two flat fields of the offsets value (Kafka Connect's reader drops a map in an offsets
value): `signal_in_progress`, the signal's offset, and `signal_attempt`, how many starts
have begun acting on it, the one that wrote the mark included. Marks written before the
count existed have no `signal_attempt` and read as attempt 1.
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

    def to_json(self) -> dict[str, Any]:
        return {"signal_in_progress": self.offset, "signal_attempt": self.attempt}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SignalMark | None:
        """The mark in an offsets value, None when it has none."""
        offset = data.get("signal_in_progress")
        if offset is None:
            return None
        return cls(int(offset), max(1, int(data.get("signal_attempt") or 1)))
