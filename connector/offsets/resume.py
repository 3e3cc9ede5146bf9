"""Which offsets record a start resumes from, out of every record of the connector's key.

Pure, so the rule is tested on its own (tests/unit/test_offsets_resume.py, a model test).

Order: the key's own partition (murmur2, where every writer of this key produces) holds the
truth in log order; records in other partitions predate a change of the partition count,
so they come first, by timestamp. Log order, never timestamps, orders the own partition:
a clock step on a writer cannot make an older record win.

Fencing: every start takes the next epoch above the highest on the topic, and the first
record of an epoch names its owner (the writer). A record counts only if its epoch is
higher than any before it, or equal with the same owner; so a fenced leader's late
records, and a second writer that computed the same epoch, never win. A tombstone (REST
DELETE) or a record another tool wrote (Debezium, no epoch) closes the current epoch: the
epoch floor is never reset, so only a later start (a higher epoch) writes after it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from connector.leadership.lease import Instance
from connector.offsets.value import ConnectorOffsets, written_by_gtidmark


class _Closed:
    """The owner of a closed epoch: equal to no writer."""

    def __repr__(self) -> str:
        return "CLOSED"


CLOSED = _Closed()


@dataclass(frozen=True, slots=True)
class OffsetRecord:
    """One consumed record of the connector's key."""

    partition: int
    offset: int
    timestamp: int  # milliseconds, the producer's clock
    value: bytes | None  # None: a tombstone


@dataclass(frozen=True, slots=True)
class Resumed:
    """What loading found: the value to resume from, and the epoch a writer holds now."""

    value: bytes | None
    epoch: int  # the highest epoch on the topic (0 when none)
    owner: Instance | _Closed | None  # that epoch's first writer; CLOSED after a reset


def resume_point(records: list[OffsetRecord], home: int) -> Resumed:
    """The value to resume from (None: none or reset) and the current epoch and owner."""
    ordered = sorted(records, key=lambda r: (r.partition == home,
                                             0 if r.partition == home else r.timestamp,
                                             r.partition, r.offset))
    value: bytes | None = None
    floor = 0
    owner: Instance | _Closed | None = CLOSED
    for record in ordered:
        raw = record.value
        if raw is None:
            value, owner = None, CLOSED
            continue
        fields = _fields(raw)
        if fields is None:  # another tool's record: taken as is, the epoch closed
            value, owner = raw, CLOSED
            continue
        epoch, writer = fields
        if epoch > floor or (epoch == floor and writer == owner):
            value, floor, owner = raw, epoch, writer
        elif epoch == floor == 0:
            value = raw  # written before every start took an epoch: log order alone
    return Resumed(value, floor, owner)


def _fields(raw: bytes) -> tuple[int, Instance | None] | None:
    """(epoch, writer) of a gtidmark record; None for another tool's, or one unreadable."""
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or not written_by_gtidmark(data):
            return None
        value = ConnectorOffsets.from_json(data)
    except (ValueError, TypeError, KeyError):
        return None
    return value.epoch, value.writer
