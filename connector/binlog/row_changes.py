"""A rows event as the reader hands it over: row images, TIME fixes, gaps of a transaction.

A rows event the library decoded (framing.py's own decoders take the common ones) becomes a
`RowsChange`; rows that cannot be emitted as the binlog has them (images without every
column, compressed events) become the transaction's `Gap`s instead, one line each later.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from connector.binlog.transactions import Gap, Op, RowsChange, Transaction
from connector.events.types import restore_empty_sets
from connector.schema import TableSchema

FULL_IMAGES = "binlog_row_image=FULL"
# MariaDB's log_bin_compress set after the start check: rows events not decoded.
COMPRESSED = "in compressed row events (log_bin_compress=ON), which gtidmark does not decode"


def image_gap(tx: Transaction, table: TableSchema, missing: tuple[int, ...]) -> None:
    """A rows event whose images leave columns out: they would stream as NULL."""
    names = ", ".join(table.columns[i].name for i in missing if i < len(table.columns))
    table_gap(tx, table, f"with row images that leave out {names} "
               "(binlog_row_image MINIMAL or NOBLOB), which would stream them as NULL",
               FULL_IMAGES)


def table_gap(tx: Transaction, table: TableSchema, what: str, setting: str) -> None:
    """Rows of `table` that cannot be emitted: a gap, one per table, setting and transaction."""
    tables = ((table.db, table.table),)
    if not any(gap.tables == tables and gap.setting == setting for gap in tx.gaps):
        tx.gaps += (Gap(tables, tx.db, what, setting),)


def _image(row: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    values: dict[str, Any] = row[f"{prefix}values"]
    none_sources = row.get(f"{prefix}none_sources")
    return restore_empty_sets(values, none_sources) if none_sources else values


_MICROSECOND = dt.timedelta(microseconds=1)
_fractional_times: dict[int, tuple[str, ...]] = {}  # id(TableSchema): cached schemas live on


def negative_time(value: dt.timedelta) -> dt.timedelta:
    """python-mysql-replication 1.0.17 decodes a negative TIME(n) with a fraction as
    -(s + (1 - f)); the stored value is -(s + f) (measured against SELECT)."""
    if value >= dt.timedelta(0):
        return value
    whole, fraction = divmod(-value // _MICROSECOND, 1_000_000)
    if not fraction:
        return value
    return -dt.timedelta(seconds=whole, microseconds=1_000_000 - fraction)


def _fix_times(rows: list[dict[str, Any]], names: tuple[str, ...]) -> None:
    for row in rows:
        for name in names:
            value = row.get(name)
            if isinstance(value, dt.timedelta):
                row[name] = negative_time(value)


def rows_change(table: TableSchema, op: Op, rows: list[Any] | None, pos: int,
                 event: Any) -> RowsChange:
    """A rows event's change: `rows` decoded by framing.py, or None: the library's `event`."""
    if rows is not None:
        return RowsChange(table, op, rows, pos)  # compiled decoder: no TIME columns
    times = _fractional_times.get(id(table))
    if times is None:
        times = _fractional_times[id(table)] = tuple(
            c.name for c in table.columns if c.type_name == "time" and (c.scale or 0) > 0)
    if op == "u":
        rows = [(_image(row, "before_"), _image(row, "after_")) for row in event.rows]
    else:
        rows = [_image(row) for row in event.rows]
    if times:
        _fix_times([image for row in rows for image in (row if op == "u" else (row,))], times)
    return RowsChange(table, op, rows, pos)
