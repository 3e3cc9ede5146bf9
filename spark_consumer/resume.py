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
