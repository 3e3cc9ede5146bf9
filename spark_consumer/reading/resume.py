"""Where a partition resumes, and the checks that stored offsets still mean what they meant.

A topic deleted and created again (new topic id, or offsets that no longer fit its range)
is never read from the old offset: the job stops with one line, unless the user named the
topic in --restart-topics, which reads it from its beginning.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

log = logging.getLogger(__name__)


class TopicRecreatedError(RuntimeError):
    """Stored offsets belong to an earlier topic of the same name (message: one line)."""


class PartitionsAddedError(RuntimeError):
    """A topic gained partitions since the table's last commit (message: one line)."""


class TableCollisionError(ValueError):
    """Two topics would be applied to one Iceberg table (message: one line)."""


def check_collisions(tables: Iterable[tuple[str, str]]) -> None:
    """(topic, table) pairs: fail when two topics map to the same table."""
    seen: dict[str, str] = {}
    for topic, table in sorted(tables):
        other = seen.setdefault(table, topic)
        if other != topic:
            raise TableCollisionError(
                f"topics {other} and {topic} would both be applied to table {table}; "
                f"use another --namespace or run one job per topic prefix")


@dataclass(frozen=True)
class PartitionState:
    """What is known about one partition: stored vs current topic id, stored offset, range."""

    topic: str
    partition: int
    stored: int | None
    stored_id: str | None
    current_id: str | None
    low: int
    end: int


def resume_offset(p: PartitionState, restart: bool) -> int:
    """The offset to read `p` from; TopicRecreatedError when the stored one is stale."""
    if p.stored is None:
        return p.low
    reason = None
    if p.stored_id and p.current_id and p.stored_id != p.current_id:
        reason = f"topic id changed from {p.stored_id} to {p.current_id}"
    elif p.stored > p.end:
        reason = f"stored offset {p.stored} is beyond the partition end {p.end}"
    elif p.stored < p.low:
        reason = (f"stored offset {p.stored} is below the first offset still in the "
                  f"partition {p.low} (records deleted before they were applied)")
    if reason is None:
        return p.stored
    if restart:
        log.warning("%s[%d]: %s; --restart-topics: reading it from its beginning (offset %d)",
                    p.topic, p.partition, reason, p.low)
        return p.low
    raise TopicRecreatedError(
        f"{p.topic}[{p.partition}]: {reason} (topic recreated?); to apply the topic from its "
        f"beginning onto the existing table run once with --restart-topics {p.topic}")


def check_partition_count(topic: str, table: str, known: int | None, now: int,
                          accepted: bool) -> None:
    """Stop when `topic` has more partitions than when `table` last committed (`known`).

    Kafka places a key by hash modulo the partition count: once partitions are added, one
    key's older changes sit in one partition and its newer ones in another, and nothing in
    the offsets says which came first. Unless the user says the topic was idle across the
    change (`accepted`), the job stops before applying anything of it.
    """
    if known is None or now <= known:
        return
    if accepted:
        log.warning("%s: %d partitions, %d when table %s last committed; --partitions-added: "
                    "going on with %d", topic, now, known, table, now)
        return
    raise PartitionsAddedError(
        f"topic {topic} has {now} partitions, {known} when table {table} last committed: a "
        f"key's changes can now be in two partitions and the job cannot tell which came "
        f"first; if the connector was stopped before the partitions were added and this job "
        f"had applied everything it wrote, run once with --partitions-added {topic}, else "
        f"rebuild the table from a new snapshot")
