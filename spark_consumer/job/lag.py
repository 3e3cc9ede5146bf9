"""How far behind a table is: offsets left after what the job applied, and that newest
record's age."""

from __future__ import annotations

from spark_consumer.reading.planner import TP
from spark_consumer.reading.reader import RangeStats


def lag_records(positions: dict[TP, int], ends: dict[TP, int]) -> int:
    """Offsets left to the end of these partitions from where the job goes on in each."""
    return sum(max(0, ends[tp] - offset) for tp, offset in positions.items())


def lag_seconds(meta: list[object], now: float) -> float | None:
    """`now` minus the Kafka timestamp of the newest record the tasks took (their
    `RangeStats`); None when none has one."""
    times = [m.newest for m in meta if isinstance(m, RangeStats) and m.newest is not None]
    return None if not times else max(0.0, now - max(times))
