"""Executor side: read one offset range with confluent-kafka, decode, keep the last change per key.

One Spark task per range. A key always lives in one partition, so the per-key reduction of
the micro-batch is complete inside the task. A range is decoded columnar when it can be, else
row by row; either way its changes come out as `Part`s for the MERGE source.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from confluent_kafka import (
    TIMESTAMP_NOT_AVAILABLE,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    TopicPartition,
)

from spark_consumer.decoding.arrowjson import ArrowRangeDecoder
from spark_consumer.decoding.columnar import Fallback, RangeDecoder, RawRecord
from spark_consumer.decoding.dbztypes import ColumnSpec
from spark_consumer.decoding.decode import BadRecord, Change, Decoder, Shape, Truncate
from spark_consumer.reading.planner import OffsetRange

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Part:
    """Changes of one range for the MERGE source: an Arrow table (columnar) or `Change`s."""

    topic: str
    rows: pa.Table | list[Change]

    @property
    def columnar(self) -> bool:
        return isinstance(self.rows, pa.Table)


@dataclass(frozen=True, slots=True)
class RangeStats:
    """What a task saw in its range (summed by the driver for the progress log); `newest`
    is the Kafka timestamp (epoch seconds) of its last record taken, None if it has none."""

    topic: str
    partition: int
    records: int
    tombstones: int
    bad: int
    upserts: int
    deletes: int
    newest: float | None = None


@dataclass(slots=True)
class Stamps:
    """The last two records `read_range` yielded, kept for the lag in seconds (a reference
    per record: no call). A `KeyWatch` ends a range on reading its key change record, so the
    last record taken is then the one before."""

    before: Message[Any, Any] | None = None
    last: Message[Any, Any] | None = None

    def newest(self, cut: bool) -> float | None:
        """The Kafka timestamp (epoch seconds) of the last record taken, the one before the
        last read when `cut`; None if it has none."""
        msg = self.before if cut else self.last
        kind, ms = msg.timestamp() if msg is not None else (TIMESTAMP_NOT_AVAILABLE, 0)
        return None if kind == TIMESTAMP_NOT_AVAILABLE else ms / 1000.0


def read_range(conf: dict[str, str], rng: OffsetRange, timeout: float = 60.0,
               stamps: Stamps | None = None) -> Iterator[RawRecord]:
    """Records (topic, partition, offset, key, value) with start <= offset < end, in order;
    the last two yielded kept in `stamps`."""
    if rng.size == 0:
        return
    settings: dict[str, object] = {"group.id": "gtidmark-spark-apply",
                                   "enable.auto.commit": False, "enable.partition.eof": True,
                                   "auto.offset.reset": "error"}
    settings.update(conf)
    consumer = Consumer(settings)
    try:
        consumer.assign([TopicPartition(rng.topic, rng.partition, rng.start)])
        last_progress = time.monotonic()
        upcoming = rng.start
        while True:
            # No more than the range still holds: consume() waits out its timeout for a
            # batch it cannot fill (a partition EOF counts as one message).
            batch = consumer.consume(max(1, min(1000, rng.end - upcoming)), 1.0)
            if not batch and time.monotonic() - last_progress > timeout:
                raise TimeoutError(f"{rng}: no records for {timeout:.0f}s")
            for msg in batch:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        # Compacted tails may end before `end`; EOF past it means done.
                        if int(msg.offset() or 0) >= rng.end:
                            return
                        continue
                    raise KafkaException(err)
                last_progress = time.monotonic()
                offset = int(msg.offset() or 0)
                if offset >= rng.end:
                    return
                upcoming = offset + 1
                if stamps is not None:
                    stamps.before, stamps.last = stamps.last, msg
                yield (rng.topic, rng.partition, offset, msg.key(), msg.value())
                if offset == rng.end - 1:
                    return
    finally:
        consumer.close()


def reduce_range(records: Iterable[RawRecord], decoder: Decoder, rng: OffsetRange
                 ) -> Iterator[Change | BadRecord | Truncate | Shape | RangeStats]:
    """Decode and keep the latest change per key; a truncate voids the changes before it;
    bad records, truncates, shapes and stats pass through."""
    latest: dict[str, Change] = {}
    count = tombstones = bad = 0
    for topic, partition, offset, key, value in records:
        count += 1
        item = decoder.decode(topic, partition, offset, key, value)
        if item is None:
            tombstones += 1
        elif isinstance(item, BadRecord):
            bad += 1
            yield item
        elif isinstance(item, Truncate):
            latest.clear()
            yield item
        else:
            latest.pop(item.key, None)  # re-insert: dict order = order of last change
            latest[item.key] = item
    deletes = sum(1 for c in latest.values() if c.op == "d")
    yield from latest.values()
    yield from decoder.shapes.values()
    yield RangeStats(rng.topic, rng.partition, count, tombstones, bad, len(latest) - deletes,
                     deletes)


Item = Part | BadRecord | Truncate | Shape | RangeStats


def decode_rows(records: Iterable[RawRecord], rng: OffsetRange,
                known: dict[str, dict[str, ColumnSpec]]) -> Iterator[Item]:
    """The row decoder's result for a range, its changes in one `Part`."""
    changes = []
    for item in reduce_range(records, Decoder(known), rng):
        if isinstance(item, Change):
            changes.append(item)
        else:
            yield item
    if changes:
        yield Part(rng.topic, changes)


def decode_range(records: Iterable[RawRecord], rng: OffsetRange,
                 known: dict[str, dict[str, ColumnSpec]]) -> Iterator[Item]:
    """Columnar when every record allows it (Arrow's JSON reader, else orjson), else row by
    row (the reference decoder).

    Records are decoded as they arrive, while the consumer fetches the next ones.
    """
    pending = iter(records)
    seen: list[RawRecord] = []

    def remembered() -> Iterator[RawRecord]:
        for record in pending:
            seen.append(record)
            yield record

    try:
        done = ArrowRangeDecoder(rng.topic).decode(remembered())
    except Fallback as exc:
        log.debug("%s[%d]: not decoded by Arrow's JSON reader: %s", rng.topic, rng.partition,
                  exc)
        seen.extend(pending)
        try:
            done = RangeDecoder(rng.topic).decode(seen)
        except Fallback as exc:
            log.debug("%s[%d]: decoded row by row: %s", rng.topic, rng.partition, exc)
            yield from decode_rows(seen, rng, known)
            return
    yield from (Part(rng.topic, table) for table in done.tables)
    yield from done.shapes
    yield RangeStats(rng.topic, rng.partition, done.records, done.tombstones, 0, done.upserts,
                     done.deletes)

