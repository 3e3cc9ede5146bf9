"""Column drops and renames of the source reach the table as Iceberg schema evolution.

Change records cannot tell `RENAME COLUMN a TO b` from dropping `a` and adding `b`; the
connector's schema-change topic (`<prefix>`) can: its DDLs name the renames and its
tableChanges the columns the source table has now. A table column the source no longer has
is renamed (or dropped) where the table's topic stops carrying it: the batch is cut before the
first record without it, so every earlier change lands in the old column first.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from pyspark.sql import SparkSession

from spark_consumer.decoding.dbztypes import ColumnSpec
from spark_consumer.iceberg.tables import (
    CONVERSIONS_PROPERTY,
    TableRef,
    TableState,
    quote,
    tblproperties,
)
from spark_consumer.reading.planner import OffsetRange, low_watermarks, resolve_topics, true_ends
from spark_consumer.reading.reader import read_range

log = logging.getLogger(__name__)

_NAME = r"(`(?:[^`]|``)+`|[^\s,`(]+)"
_NOT_COLUMNS = {"index", "key", "primary", "unique", "foreign", "constraint", "partition",
                "check", "fulltext", "spatial", "default", "period", "system", "if"}
_EVENTS = (
    ("rename", re.compile(rf"\bRENAME\s+COLUMN\s+{_NAME}\s+TO\s+{_NAME}", re.IGNORECASE)),
    ("rename", re.compile(rf"\bCHANGE\s+(?:COLUMN\s+)?(?:IF\s+EXISTS\s+)?{_NAME}\s+{_NAME}",
                          re.IGNORECASE)),
    ("drop", re.compile(rf"\bDROP\s+(?:COLUMN\s+)?(?:IF\s+EXISTS\s+)?{_NAME}", re.IGNORECASE)),
    ("add", re.compile(rf"\bADD\s+(?:COLUMN\s+)?(?:IF\s+NOT\s+EXISTS\s+)?{_NAME}",
                       re.IGNORECASE)),
)


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


@dataclass(frozen=True)
class ColumnEvent:
    """One column clause of an ALTER TABLE: `rename` (to `new`), `drop` or `add`."""

    kind: str
    column: str
    new: str | None = None


def column_events(ddl: str) -> list[ColumnEvent]:
    """The renames, drops and adds of columns in an ALTER TABLE, in the order it gives them
    (`CHANGE a a INT`, `DROP INDEX i`, `ADD PRIMARY KEY` ... are none)."""
    found = []
    for kind, pattern in _EVENTS:
        for match in pattern.finditer(ddl):
            if not match.group(1).startswith("`") and match.group(1).lower() in _NOT_COLUMNS:
                continue
            column = _unquote(match.group(1))
            new = _unquote(match.group(2)) if kind == "rename" else None
            if new is None or new.lower() != column.lower():
                found.append((match.start(), ColumnEvent(kind, column, new)))
    return [event for _, event in sorted(found, key=lambda f: f[0])]


def _table_id(text: str) -> tuple[str, str] | None:
    parts = [p.strip('"') for p in re.findall(r'"(?:[^"]|"")*"|[^.]+', text)]
    return (parts[-2], parts[-1]) if len(parts) >= 2 else None


def follow_schema_change(tables: dict[tuple[str, str], list[ColumnEvent]],
                         value: bytes | None) -> None:
    """Note the column events of one schema-change record (JSON, with or without schemas);
    its tableChanges name the table (Debezium's may lack the columns: gtidmark's do for a
    table it never saw declared), its DDL the columns."""
    doc = _json(value)
    payload = doc.get("payload", doc) if isinstance(doc, dict) and "schema" in doc else doc
    if not isinstance(payload, dict):
        return
    for change in payload.get("tableChanges") or []:
        ident = _table_id(str(change.get("id", "")))
        if ident is None:
            continue
        if change.get("type") == "DROP":
            tables.pop(ident, None)
        elif change.get("type") == "ALTER":
            events = column_events(str(payload.get("ddl") or ""))
            tables.setdefault(ident, []).extend(events)


@dataclass(frozen=True)
class ColumnChange:
    """A table column the source renamed (`new` set) or dropped (`new` None)."""

    column: str
    new: str | None


def pending(state: TableState, events: list[ColumnEvent] | None) -> list[ColumnChange]:
    """The table columns the source renamed or dropped since, each with its new name; one
    dropped and added again is not (nor a key column: that is a key change)."""
    have = {c.name.lower() for c in state.columns}  # MySQL's column names ignore case
    out = []
    for column in (c.name for c in state.columns):
        if column in state.key_columns:
            continue
        name, gone = column, False
        for event in events or []:
            if event.column.lower() != name.lower():
                continue
            if event.kind == "rename" and not gone and event.new is not None:
                name = event.new
            else:
                gone = event.kind == "drop"
        if gone:
            out.append(ColumnChange(column, None))
        elif name != column:
            out.append(ColumnChange(column, None if name.lower() in have else name))
    return out


def _json(value: bytes | None) -> object:
    """A record's JSON document; None for a tombstone or a record that is not JSON (the
    decoder dead-letters such a change record; a schema change then says nothing)."""
    if not value:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def _image(value: bytes | None) -> dict[str, object] | None:
    """A change record's row image (`after`, else `before`); None for a tombstone."""
    doc = _json(value)
    payload = doc.get("payload", doc) if isinstance(doc, dict) and "schema" in doc else doc
    image = payload.get("after") or payload.get("before") if isinstance(payload, dict) else None
    return image if isinstance(image, dict) else None


def first_without(kafka: dict[str, str], rng: OffsetRange, column: str) -> int:
    """The offset of the range's first record whose row lacks `column` (its end if none)."""
    for _, _, offset, _, value in read_range(kafka, rng):
        image = _image(value)
        if image is not None and column not in image:
            return offset
    return rng.end


def first_columns(kafka: dict[str, str], rng: OffsetRange) -> list[str] | None:
    """The columns of the range's first row image, for a table not created yet."""
    for _, _, _, _, value in read_range(kafka, rng):
        image = _image(value)
        if image is not None:
            return list(image)
    return None


def apply_change(spark: SparkSession, state: TableState, change: ColumnChange) -> TableState:
    """RENAME COLUMN or DROP COLUMN (old snapshots keep the dropped values); props follow."""
    ref = state.ref.sql
    conversions: dict[str, str] = {}
    for row in spark.sql(f"SHOW TBLPROPERTIES {ref}").collect():
        if row["key"] == CONVERSIONS_PROPERTY:
            conversions = json.loads(row["value"])
    kind = conversions.pop(change.column, None)
    if change.new is None:
        spark.sql(f"ALTER TABLE {ref} DROP COLUMN {quote(change.column)}")
        columns = [c for c in state.columns if c.name != change.column]
        log.info("table %s: column %s dropped, as at the source (earlier snapshots keep it)",
                 state.ref, change.column)
    else:
        spark.sql(f"ALTER TABLE {ref} RENAME COLUMN {quote(change.column)} TO "
                  f"{quote(change.new)}")
        if kind is not None:
            conversions[change.new] = kind
        columns = [c if c.name != change.column else replace(c, name=change.new)
                   for c in state.columns]
        log.info("table %s: column %s renamed to %s, as at the source", state.ref,
                 change.column, change.new)
    props = {CONVERSIONS_PROPERTY: json.dumps(conversions, sort_keys=True)}
    spark.sql(f"ALTER TABLE {ref} SET TBLPROPERTIES ({tblproperties(props)})")
    return TableState(state.ref, columns, state.key_columns)


class ColumnDdl:
    """The schema-change topics read so far, and the step that makes a table follow them."""

    def __init__(self, spark: SparkSession, kafka: dict[str, str]) -> None:
        self.spark = spark
        self.kafka = kafka
        self._read: dict[str, int] = {}  # schema-change topic -> next offset
        self._tables: dict[tuple[str, str], list[ColumnEvent]] = {}

    def refresh(self, topics: Iterable[str]) -> None:
        """Read the schema-change topics of `topics` (`<prefix>.<db>.<table>`) to their ends;
        once per batch, after its ranges are planned, so it has every DDL before them."""
        prefixes = {".".join(t.split(".")[:-2]) for t in topics if t.count(".") >= 2}
        for prefix in sorted(prefixes):
            if not resolve_topics(self.kafka, None, re.escape(prefix)):
                continue  # no schema-change topic: columns are only ever added
            start = self._read.get(prefix)
            if start is None:  # retention may have deleted the topic's first records
                start = low_watermarks(self.kafka, [(prefix, 0)])[(prefix, 0)]
            end = true_ends(self.kafka, [(prefix, 0)]).get((prefix, 0), 0)
            for _, _, _, _, value in read_range(self.kafka, OffsetRange(prefix, 0, start, end)):
                follow_schema_change(self._tables, value)
            self._read[prefix] = max(start, end)

    def follow(self, state: TableState | None, rngs: list[OffsetRange]
               ) -> tuple[TableState | None, list[OffsetRange]]:
        """Apply the drops and renames whose records start the ranges; cut the ranges before
        the first record of a drop or rename still to come (for a new table too)."""
        if not rngs:
            return state, rngs
        parts = rngs[0].topic.split(".")
        source = self._tables.get((parts[-2], parts[-1])) if len(parts) >= 3 else None
        if not source:
            return state, rngs  # no drop or rename known: no record needs reading here
        while True:
            now = state
            if now is None:  # the table will be created from the first records: as they are
                names = first_columns(self.kafka, rngs[0])
                if names is None:
                    return state, rngs
                now = TableState(TableRef("", "", rngs[0].topic),
                                 [ColumnSpec(n, "string") for n in names], [])
            changes = pending(now, source)
            if not changes:
                return state, rngs
            cuts = {c: [first_without(self.kafka, r, c.column) for r in rngs] for c in changes}
            ends = [min(cut[i] for cut in cuts.values()) for i in range(len(rngs))]
            if state is None or any(end > r.start for end, r in zip(ends, rngs, strict=True)):
                return state, [OffsetRange(r.topic, r.partition, r.start, end)
                               for end, r in zip(ends, rngs, strict=True) if end > r.start]
            # Every range starts past a pending DDL, so past the earliest: its column is the
            # one all of them lack.
            first = next(c for c, cut in cuts.items()
                         if all(at == r.start for at, r in zip(cut, rngs, strict=True)))
            state = apply_change(self.spark, state, first)
