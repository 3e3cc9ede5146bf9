"""Reading a range from Kafka (confluent-kafka replaced by a fake partition)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from confluent_kafka import KafkaError

from spark_consumer.reading import reader
from spark_consumer.reading.planner import OffsetRange


class _Message:
    def __init__(self, offset: int, eof: bool = False) -> None:
        self._offset, self._eof = offset, eof

    def error(self) -> Any:
        return KafkaError(KafkaError._PARTITION_EOF) if self._eof else None

    def offset(self) -> int:
        return self._offset

    def key(self) -> bytes:
        return b"k%d" % self._offset

    def value(self) -> bytes:
        return b"v%d" % self._offset


class _Partition:
    """Offsets 0..`size`-1 then EOF; records every batch size asked for."""

    size = 2500
    asked: ClassVar[list[int]] = []

    def __init__(self, settings: dict[str, object]) -> None:
        self.next = 0

    def assign(self, tps: list[Any]) -> None:
        self.next = tps[0].offset

    def consume(self, num_messages: int, timeout: float) -> list[_Message]:
        type(self).asked.append(num_messages)
        out = [_Message(o) for o in range(self.next, min(self.size, self.next + num_messages))]
        self.next += len(out)
        return out if out else [_Message(self.next, eof=True)]

    def close(self) -> None:
        pass


def test_a_range_never_asks_for_more_records_than_it_holds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """consume() waits out its timeout for a batch it cannot fill: 1 s per range otherwise."""
    monkeypatch.setattr(reader, "Consumer", _Partition)
    _Partition.asked = []
    rng = OffsetRange("t", 0, 700, 2205)
    got = [r[2] for r in reader.read_range({}, rng)]
    assert got == list(range(700, 2205))
    assert _Partition.asked == [1000, 505]
