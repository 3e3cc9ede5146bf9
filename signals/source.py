"""Debezium's `source` signal channel, read-only (DBLog's way): a row INSERTed into the
signal table (`signal.data.collection`) on the primary reaches the replica's binlog, and
the stream hands it here to be read as a signal. gtidmark never writes to that table.

A signal's position is its transaction's: the offsets pass it only after it was acted on
(connector/offsets/signal_mark.py), so a restart never acts on it again and a kill before
the commit acts on it again; the in-progress mark (`SourceMark`) skips a signal that every
allowed start died acting on, as for the signal topic.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from connector.offsets.mark import MAX_ATTEMPTS, SourceMark
from signals.channel import ReceivedSignal
from signals.models import (
    MAX_ID_CHARS,
    Signal,
    SignalRejected,
    decode_json,
    signal_from_value,
)

log = logging.getLogger(__name__)

# Rows Debezium itself writes into the signal table (its incremental snapshot watermarks
# when read.only=false): not signals to act on.
WATERMARKS = frozenset({"snapshot-window-open", "snapshot-window-close"})


@dataclass(frozen=True)
class SourceSignalRow:
    """One row INSERTed into the signal table, as the stream carries it; not read yet."""

    gtid: str  # the transaction that INSERTed it: its position
    row: int  # its index among that transaction's signal rows
    values: tuple[Any, ...]  # its columns, in the table's order


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def signal_from_row(values: tuple[Any, ...]) -> Signal | None:
    """The row as Debezium's SignalRecord reads it: the first three columns are id, type
    and data (a JSON object as text), whatever their names. None: a Debezium watermark."""
    if len(values) < 3:
        raise SignalRejected(f"the signal table has {len(values)} column(s); Debezium's has "
                             "three: id, type, data")
    signal_id, kind, data = (_text(v) for v in values[:3])
    if kind is not None and kind.lower() in WATERMARKS:
        return None
    document: Any = None
    if data is not None and data.strip():
        document = decode_json(data, "data")
        if not isinstance(document, dict):
            raise SignalRejected(f"data is not a JSON object (got {type(document).__name__})")
    value: dict[str, Any] = {"type": kind, "data": document}
    if signal_id is not None:
        value["id"] = signal_id
    return signal_from_value(value)


class SourceSignals:
    """Reads the signal table's rows the stream hands over (`source` channel enabled)."""

    def __init__(self, table: str | None) -> None:
        self.table = table  # db.table; None: the source channel is not enabled
        self._db, _, self._name = (table or "").partition(".")
        self._unfinished: SourceMark | None = None

    @property
    def enabled(self) -> bool:
        return self.table is not None

    @property
    def unfinished(self) -> SourceMark | None:
        """The mark of the row the last runs did not finish acting on, until it is passed."""
        return self._unfinished

    def open(self, unfinished: SourceMark | None) -> None:
        """Start reading; the row `unfinished` marks is acted on again, or skipped once
        exhausted. Not enabled: rows of that table are plain rows."""
        self._unfinished = unfinished if self.enabled else None
        if self.enabled:
            log.info("signal.enabled.channels has source: signals are read from rows "
                     "INSERTed into %s", self.table)

    def watches(self, db: str, table: str) -> bool:
        """Rows INSERTed into `db`.`table` are signals."""
        return self.table is not None and db == self._db and table == self._name

    def _marked(self, row: SourceSignalRow) -> SourceMark | None:
        mark = self._unfinished
        return mark if mark is not None and (mark.gtid, mark.row) == (row.gtid, row.row) \
            else None

    def mark_for(self, row: SourceSignalRow) -> SourceMark:
        """The in-progress mark to write before acting on `row`: the attempt after the last
        runs' ones when they ended while acting on it, else the first."""
        mark = self._marked(row)
        return SourceMark(row.gtid, row.row) if mark is None else mark.next_attempt()

    def acts_on(self, row: SourceSignalRow) -> bool:
        """Not a row every allowed start died acting on (that one is skipped unread)."""
        mark = self._marked(row)
        return mark is None or not mark.exhausted

    def origin(self, row: SourceSignalRow) -> str:
        """How its log lines name the row: its transaction, index and id."""
        signal_id = _text(row.values[0]) if row.values else None
        named = "" if signal_id is None else f", id {signal_id[:MAX_ID_CHARS]!r}"
        return f"from {self.table} (GTID {row.gtid}, row {row.row}{named})"

    def read(self, row: SourceSignalRow) -> ReceivedSignal:
        """The row as a signal, or None and the reason, logged in one line; the last runs'
        mark is passed with it."""
        where = f"signal {self.origin(row)}"
        mark = self._marked(row)
        self._unfinished = None if mark is not None else self._unfinished
        if mark is not None and mark.exhausted:
            reason = (f"the last {MAX_ATTEMPTS} runs each ended while acting on it (killed "
                      "or crashed?); it is not acted on again")
            log.warning("%s skipped: %s", where, reason)
            return ReceivedSignal(row.row, None, reason, self.origin(row))
        if mark is not None:
            log.warning("%s: the last run ended while acting on it (killed, crashed or taken "
                        "over); acting on it again, attempt %d of %d", where,
                        mark.attempt + 1, MAX_ATTEMPTS)
        try:
            signal = signal_from_row(row.values)
        except SignalRejected as exc:
            log.warning("%s skipped: %s", where, exc.reason)
            return ReceivedSignal(row.row, None, exc.reason, self.origin(row))
        except Exception as exc:  # noqa: BLE001 - a malformed signal must never stop streaming
            reason = f"could not be read ({type(exc).__name__})"
            log.warning("%s skipped: %s", where, reason)
            return ReceivedSignal(row.row, None, reason, self.origin(row))
        if signal is None:
            log.debug("%s: a Debezium watermark row, not a signal", where)
            return ReceivedSignal(row.row, None, "a Debezium watermark", self.origin(row))
        return ReceivedSignal(row.row, signal, None, self.origin(row))
