"""The DBLog window of one chunk: pure bookkeeping between the low and the high watermark.

The caller SELECTs a chunk between reading L and H, then keeps streaming. Row events of
transactions outside L might be newer than what the SELECT saw, so they drop the chunk rows
whose key they touch (their own change event carries the state). Once the stream has
processed the end of every transaction in H, the rows left are emitted as `op=r`, before
any later event. Dropping too much is safe; keeping a row some unseen event changed is not.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable
from typing import Any, Generic, Literal, TypeAlias, TypeVar

from connector.gtid import Gtid, Position

__all__ = ["ChunkWindow", "Key", "RecentChanges", "WindowClosedError"]

log = logging.getLogger("gtidmark.snapshot")

Key: TypeAlias = tuple[Any, ...]
Row = TypeVar("Row")  # a chunk row as the caller keeps it (a dict, or already encoded)
_State = Literal["open", "closed", "discarded"]


class WindowClosedError(RuntimeError):
    """The window was closed or discarded; its rows are gone."""


class ChunkWindow(Generic[Row]):
    """One buffered chunk and its watermarks.

    `rows` maps primary-key tuples to rows, in the SELECT's `ORDER BY` order (the window
    takes ownership of the dict; it never looks inside a row). `low` and `high` are positions of the same flavour.
    The stream must not already be past `low` when the window opens: check `safe_to_open`.
    """

    __slots__ = ("_dropped", "_key_types", "_rows", "_state", "high", "low", "table_id")

    def __init__(self, table_id: str, rows: dict[Key, Row], low: Position,
                 high: Position) -> None:
        self.table_id = table_id
        self.low = low
        self.high = high
        self._rows = rows
        self._dropped = 0
        self._state: _State = "open"
        # Checked against the first event's key: a type mismatch (str vs bytes, int vs
        # Decimal) would silently never match, and stale rows would go out.
        self._key_types: tuple[type, ...] | None = (
            tuple(type(v) for v in next(iter(rows))) if rows else None)

    def safe_to_open(self, processed: Position) -> bool:
        """True if L covers what the stream has already processed (and emitted).

        Otherwise a change already emitted may be missing from the chunk, and no later
        event would correct it: discard the window and SELECT again with fresh watermarks.
        """
        self._check_open()
        return self.low.covers(processed)

    def on_row_change(self, table_id: str, gtid: Gtid, key: Key) -> None:
        """A row event of transaction `gtid` touched `key`: drop the row unless L has it."""
        self._check_open()
        if table_id != self.table_id:
            return
        if self._key_types is not None:
            self._check_key_types(key)
        if key not in self._rows:
            return
        if not self.low.contains(gtid):
            del self._rows[key]
            self._dropped += 1

    def on_row_changes(self, table_id: str, gtid: Gtid, keys: Iterable[Key]) -> None:
        """`on_row_change` for all keys of a rows event (an update passes before and after)."""
        for key in keys:
            self.on_row_change(table_id, gtid, key)

    def on_ddl(self, table_id: str) -> bool:
        """A DDL statement changed `table_id`: discard if it is ours (the caller re-selects)."""
        self._check_open()
        if table_id != self.table_id:
            return False
        self.discard()
        return True

    def ready(self, processed: Position) -> bool:
        """True once the stream has processed the end of every transaction H holds.

        Call it after each transaction end (and once at open: a zero-width window on an
        idle database is ready at once, without waiting for a heartbeat).
        """
        self._check_open()
        return processed.covers(self.high)

    def close(self) -> list[Row]:
        """The rows no event touched, in SELECT (key) order; the window is unusable after."""
        self._check_open()
        rows = list(self._rows.values())
        self._rows = {}
        self._state = "closed"
        return rows

    def discard(self) -> None:
        """Forget the chunk (a DDL arrived, or the window is unsafe); the caller re-selects."""
        self._rows = {}
        self._state = "discarded"

    @property
    def dropped(self) -> int:
        """How many chunk rows events have dropped so far."""
        return self._dropped

    @property
    def pending(self) -> int:
        """How many chunk rows would be emitted if the window closed now."""
        return len(self._rows)

    @property
    def is_open(self) -> bool:
        return self._state == "open"

    def _check_key_types(self, key: Key) -> None:
        types = tuple(type(v) for v in key)
        if types != self._key_types:
            log.warning("chunk window of %s: binlog key %r has types %s but the chunk's keys "
                        "have %s; such keys never match", self.table_id, key,
                        [t.__name__ for t in types], [t.__name__ for t in self._key_types or ()])
        self._key_types = None  # once per window

    def _check_open(self) -> None:
        if self._state != "open":
            raise WindowClosedError(f"chunk window of {self.table_id} is {self._state}")

    def __repr__(self) -> str:
        return (f"ChunkWindow({self.table_id!r}, low={self.low!s}, high={self.high!s}, "
                f"pending={self.pending}, dropped={self._dropped}, {self._state})")


class RecentChanges:
    """The row keys the stream touched lately, for windows whose L lags the stream.

    When L is behind what the stream already emitted, those emitted changes may be newer
    than the SELECT: replaying their keys into the window drops the rows they touched (the
    emitted events carry the state), which makes the window safe, if the retained history
    reaches back to L. Bounded by `max_rows`; the oldest transactions go first, and of a
    transaction whose keys are not all kept (larger than that, or `reading` when the keeping
    began), only that L holds it makes a window safe.
    """

    __slots__ = ("_base", "_current", "_max_rows", "_overflow", "_rows", "_txs")

    def __init__(self, start: Position, reading: Gtid | None, max_rows: int = 100_000) -> None:
        """`start`: the stream's position; `reading`: the transaction whose first pieces
        already went out (a large one is emitted in pieces), None between transactions."""
        self._base = start  # everything not retained is covered by this position
        self._max_rows = max_rows
        self._txs: deque[tuple[Position, list[tuple[str, Gtid, Key]]]] = deque()
        self._current: list[tuple[str, Gtid, Key]] = []
        # The transaction being read whose keys are not all kept (beyond max_rows, or
        # pieces emitted before this history began).
        self._overflow: Gtid | None = reading
        self._rows = 0

    def record(self, table_id: str, gtid: Gtid, key: Key) -> None:
        """A row event of the transaction being read touched `key`."""
        if len(self._current) < self._max_rows:
            self._current.append((table_id, gtid, key))
        else:
            self._overflow = gtid

    def end_transaction(self, processed: Position) -> None:
        """The transaction ended; `processed` is the stream position after it."""
        changes, self._current = self._current, []
        if self._overflow is not None:  # nothing before `processed` can be replayed in full
            self._overflow, self._base, self._rows = None, processed, 0
            self._txs.clear()
            return
        if not changes:
            return  # nothing to replay; `_base` stays a position no retained change is in
        self._txs.append((processed, changes))
        self._rows += len(changes)
        while self._rows > self._max_rows and self._txs:
            self._base, dropped = self._txs.popleft()
            self._rows -= len(dropped)

    def forget_covered(self, low: Position) -> None:
        """Drop the transactions `low` holds: no window with a later L would replay them."""
        while self._txs and low.covers(self._txs[0][0]):
            self._base, dropped = self._txs.popleft()
            self._rows -= len(dropped)

    def replay_into(self, window: ChunkWindow[Any], processed: Position) -> bool:
        """Make `window` safe against what the stream already processed; False if it cannot
        be (history too short: discard the window and SELECT again).

        The transaction being read is replayed too: a large one is emitted in pieces, and
        `processed` (the position before it) does not show the pieces that went out.
        """
        if self._overflow is not None and not window.low.contains(self._overflow):
            return False  # the SELECT may predate that transaction: SELECT again
        if not window.safe_to_open(processed):
            if not window.low.covers(self._base):
                return False
            for _, changes in self._txs:
                for table_id, gtid, key in changes:
                    window.on_row_change(table_id, gtid, key)
        for table_id, gtid, key in self._current:
            window.on_row_change(table_id, gtid, key)
        return True

    @property
    def retained_rows(self) -> int:
        return self._rows
