"""Two-phase XA: rows are logged at XA PREPARE, committed by a later GTID.

The binlog holds a prepared XA as its own GTID group (rows, `XA END`, an XA_PREPARE event)
and `XA COMMIT` / `XA ROLLBACK` as a separate one-statement group. The rows are held here
until the commit; while any XA is open, a restart must read its prepared group again. On
MySQL the offsets position is then the stream's position without the open XAs' prepare
GTIDs (a GTID set says exactly that: the restart reads those groups and nothing else
again); a MariaDB position (the last GTID per domain) cannot leave one out, so it stays
at the start of the earliest open XA.
"""

from __future__ import annotations

import re
from typing import Any

from connector.flavours import Flavour
from connector.gtid import Gtid, Position

FL_PREPARED_XA = 0x40  # MariaDB GTID flag: this group ends with XA PREPARE
FL_COMPLETED_XA = 0x80  # MariaDB GTID flag: this group is XA COMMIT / XA ROLLBACK

# How the server logs the completing statement: XA COMMIT X'61',X'',1
_XA_END_STATEMENT = re.compile(
    r"^\s*XA\s+(COMMIT|ROLLBACK)\s+X'([0-9A-Fa-f]*)'\s*,\s*X'([0-9A-Fa-f]*)'\s*,\s*(\d+)",
    re.IGNORECASE)

XaId = tuple[int, bytes, bytes]  # (formatID, gtrid, bqual)


def parse_xa_end(query: str) -> tuple[str, XaId] | None:
    """("COMMIT"|"ROLLBACK", xid) for a logged XA completion statement, else None."""
    match = _XA_END_STATEMENT.match(query)
    if match is None:
        return None
    verb, gtrid, bqual, fmt = match.groups()
    return verb.upper(), (int(fmt), bytes.fromhex(gtrid), bytes.fromhex(bqual))


class OpenXa:
    """Prepared-but-not-completed XA transactions, in prepare order."""

    def __init__(self) -> None:
        self._open: dict[XaId, tuple[Position, Gtid, list[Any]]] = {}

    def prepare(self, xid: XaId, start: Position, gtid: Gtid, changes: list[Any]) -> None:
        """Hold `changes`; `start` is the stream position just before the prepared group,
        `gtid` the group's."""
        self._open.pop(xid, None)
        self._open[xid] = (start, gtid, changes)

    def complete(self, xid: XaId) -> list[Any] | None:
        """The held changes of `xid` (None when its prepare was never seen)."""
        found = self._open.pop(xid, None)
        return None if found is None else found[2]

    def hold(self, position: Position, flavour: Flavour) -> str | None:
        """Where a restart must resume while an XA is open (None when none is): `position`
        without the open prepare groups, else the start of the earliest one."""
        if not self._open:
            return None
        exact = flavour.without(position, [gtid for _, gtid, _ in self._open.values()])
        return str(exact if exact is not None else next(iter(self._open.values()))[0])
