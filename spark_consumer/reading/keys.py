"""Key changes: where a range's records stop carrying the table's key columns.

A source primary key change (`ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (a, b)`)
changes the Kafka key of every later record of the table. Every record written before the
change precedes every record written after it, in each partition and across partitions, so
the job applies a table's records up to the change on the old key, then switches the table's
merge key and applies the rest on the new one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

import orjson

from spark_consumer.decoding.columnar import RawRecord
from spark_consumer.reading.planner import OffsetRange


@dataclass(frozen=True, slots=True)
class KeyChange:
    """The first record of a range whose key columns differ from the table's."""

    topic: str
    partition: int
    offset: int
    key_columns: tuple[str, ...]


def record_key_columns(raw: bytes | None) -> tuple[str, ...] | None:
    """The field names of a record key (JSON with or without schema), in the record's order;
    None when the key is no JSON object (the decoder dead-letters such records)."""
    if raw is None:
        return None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if isinstance(obj, dict) and set(obj) == {"schema", "payload"}:
        obj = obj["payload"]
    if not isinstance(obj, dict) or not obj:
        return None
    return tuple(obj)


class KeyWatch:
    """Passes a range's records on until one's key columns differ from `expected` (the
    table's; None: the range's first key), and keeps that record's place as `change`."""

    def __init__(self, expected: Sequence[str] | None) -> None:
        self.expected = frozenset(expected) if expected else None
        self.change: KeyChange | None = None

    def records(self, records: Iterable[RawRecord]) -> Iterator[RawRecord]:
        for record in records:
            columns = record_key_columns(record[3])
            if columns is not None:
                if self.expected is None:
                    self.expected = frozenset(columns)
                elif frozenset(columns) != self.expected:
                    self.change = KeyChange(record[0], record[1], record[2], columns)
                    return
            yield record


def cut_at(ranges: list[OffsetRange], changes: Iterable[KeyChange]) -> list[OffsetRange]:
    """`ranges` ending where their records' key changes: what the old key applies to."""
    at = {(c.topic, c.partition): c.offset for c in changes}
    return [replace(r, end=min(r.end, at.get((r.topic, r.partition), r.end))) for r in ranges]


def next_key(changes: Iterable[KeyChange]) -> KeyChange | None:
    """The change to switch to when nothing precedes any of them (the lowest partition's)."""
    return min(changes, key=lambda c: (c.topic, c.partition, c.offset), default=None)
