"""The offsets value's JSON contract and the Java partitioner's hash."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from connector.kafka.partitioner import key_partition, murmur2
from connector.leadership.lease import Instance
from connector.offsets.store import parse_offsets
from connector.offsets.value import ConnectorOffsets
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
                           "snapshot_state", "signal_offset", "epoch", "writer_host", "writer_pid",
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
