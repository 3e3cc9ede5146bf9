"""How far behind a table is: offsets left and the age of the newest record applied."""

from __future__ import annotations

import time

from confluent_kafka import KafkaError, TopicPartition

from spark_consumer.planner import TP, OffsetRange, _consumer


def lag_records(ranges: list[OffsetRange], ends: dict[TP, int]) -> int:
    """Offsets left to the end of these partitions once the ranges are applied."""
    return sum(max(0, ends[(r.topic, r.partition)] - r.end) for r in ranges)


def newest_timestamps(conf: dict[str, str], ranges: list[OffsetRange],
                      timeout: float = 10.0) -> dict[TP, float]:
    """Kafka timestamp (epoch seconds) of the last record of each non-empty range; a range
    whose last offset holds no record (compacted, a transaction marker) is left out."""
    wanted = {(r.topic, r.partition): r for r in ranges if r.size > 0}
    if not wanted:
        return {}
    consumer = _consumer(conf, eof=True)
    out: dict[TP, float] = {}
    try:
        consumer.assign([TopicPartition(t, p, r.end - 1) for (t, p), r in wanted.items()])
        pending, deadline = set(wanted), time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            for msg in consumer.consume(len(pending), 0.5):
                tp = (str(msg.topic()), int(msg.partition() or 0))
                err = msg.error()
                if err is not None and err.code() != KafkaError._PARTITION_EOF:
                    continue
                if err is None and tp in pending and int(msg.offset() or 0) < wanted[tp].end:
                    kind, ms = msg.timestamp()
                    if kind != 0:  # TIMESTAMP_NOT_AVAILABLE
                        out[tp] = ms / 1000.0
                pending.discard(tp)
    finally:
        consumer.close()
    return out


def lag_seconds(newest: dict[TP, float], ranges: list[OffsetRange],
                now: float | None = None) -> float | None:
    """Now minus the newest record applied from these ranges; None when none has a time."""
    times = [newest[(r.topic, r.partition)] for r in ranges if (r.topic, r.partition) in newest]
    return None if not times else max(0.0, (time.time() if now is None else now) - max(times))


def table_lag(ranges: list[OffsetRange], ends: dict[TP, int],
              newest: dict[TP, float]) -> tuple[int, float | None]:
    """A table's lag after its batch: in records, and in seconds (None if unknown)."""
    return lag_records(ranges, ends), lag_seconds(newest, ranges)
