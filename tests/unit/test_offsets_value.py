"""The offsets value's JSON contract and the Java partitioner's hash."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from connector.kafka import key_partition, murmur2
from connector.lease import Instance
from connector.offsets import newest_value, parse_offsets
from connector.offsets_value import ConnectorOffsets
from tests.unit.snapshot_strategies import states

ints = st.integers(min_value=0, max_value=2**63 - 1)
offsets = st.builds(ConnectorOffsets, gtids=st.text(), file=st.text(), pos=ints, event=ints,
                    row=ints, server_id=ints, ts_sec=ints,
                    snapshot=st.none() | states,
                    signal_offset=st.none() | ints, epoch=ints,
                    writer=st.none() | st.builds(Instance, host=st.text(), pid=ints,
                                                 since=st.floats(0, 2e9).map(
                                                     lambda f: round(f, 3))))


@given(offsets)
def test_round_trip_through_the_record_bytes(value: ConnectorOffsets) -> None:
    assert parse_offsets(value.to_bytes()) == value
    assert ConnectorOffsets.from_json(json.loads(json.dumps(value.to_json()))) == value


def test_record_has_kafka_connects_field_names() -> None:
    record: dict[str, Any] = json.loads(ConnectorOffsets(gtids="0-1-2").to_bytes())
    assert set(record) == {"gtids", "file", "pos", "event", "row", "server_id", "ts_sec",
                           "snapshot", "signal_offset", "epoch", "writer_host", "writer_pid",
                           "writer_since"}


@given(offsets)
def test_every_value_is_a_primitive_as_kafka_connect_requires(value: ConnectorOffsets) -> None:
    # org.apache.kafka.connect.storage.OffsetUtils.validateFormat: a map or a list makes
    # Connect (and Debezium reading our offsets) drop the whole value.
    record = json.loads(value.to_bytes())
    assert all(v is None or isinstance(v, (str, int, float, bool)) for v in record.values())


def test_murmur2_matches_kafkas_java_test_vectors() -> None:
    # org.apache.kafka.common.utils.UtilsTest#testMurmur2
    cases = {b"21": -973932308, b"foobar": -790332482, b"a-little-bit-long-string": -985981536,
             b"a-little-bit-longer-string": -1486304829,
             b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
             b"abc": 479470107}
    assert {k: murmur2(k) for k in cases} == cases
    assert key_partition(b"21", 25) == (-973932308 & 0x7FFFFFFF) % 25


class _Record:
    """The parts of a consumed offsets record that `newest_value` reads."""

    def __init__(self, offset: int, value: dict[str, Any] | None, partition: int = 0,
                 key: bytes = b"k") -> None:
        self._offset, self._partition, self._key = offset, partition, key
        self._value = None if value is None else json.dumps(value).encode()

    def key(self) -> bytes:
        return self._key

    def value(self) -> bytes | None:
        return self._value

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def timestamp(self) -> tuple[int, int]:
        return (1, 1_000 + self._offset)


def test_a_fenced_writers_late_record_loses_to_the_newer_epoch() -> None:
    records = [_Record(0, {"gtids": "0-1-5", "epoch": 1}),
               _Record(1, {"gtids": "0-1-9", "epoch": 2}),
               _Record(2, {"gtids": "0-1-6", "epoch": 1}),  # the zombie, written late
               _Record(3, {"gtids": "0-1-0"}, key=b"other")]
    raw = newest_value(records, b"k", 0)  # type: ignore[arg-type]
    assert raw is not None and json.loads(raw)["gtids"] == "0-1-9"


def test_a_tombstone_forgets_every_epoch_before_it() -> None:
    records = [_Record(0, {"gtids": "0-1-9", "epoch": 4}), _Record(1, None),
               _Record(2, {"gtids": "0-1-3", "epoch": 1})]
    raw = newest_value(records, b"k", 0)  # type: ignore[arg-type]
    assert raw is not None and json.loads(raw)["gtids"] == "0-1-3"
    assert newest_value(records[:2], b"k", 0) is None  # type: ignore[arg-type]
