"""The Kafka signal channel against the real broker: order, skipping, positions, partitions."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest
from confluent_kafka import Consumer

from connector.settings.errors import ConfigError
from connector.settings.model import ConnectorConfig
from connector.settings.parse import parse_config
from signals.channel import ReceivedSignal, SignalChannel
from signals.models import ExecuteSnapshot, Log, SetThrottle
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce

pytestmark = pytest.mark.integration


def _config(broker: Broker, prefix: str) -> ConnectorConfig:
    return parse_config({"name": f"{prefix}-connector", "config": {
        "database.hostname": "127.0.0.1", "database.user": "cdc", "database.server.id": 7,
        "topic.prefix": prefix, "bootstrap.servers": broker.bootstrap}})


def _value(kind: str, **data: Any) -> bytes:
    return json.dumps({"type": kind, "data": data}).encode()


def _poll_n(channel: SignalChannel, n: int, timeout: float = 20.0) -> list[ReceivedSignal]:
    got: list[ReceivedSignal] = []
    deadline = time.monotonic() + timeout
    while len(got) < n and time.monotonic() < deadline:
        got += channel.poll(0.5)
    assert len(got) == n, f"expected {n} signals, got {got}"
    return got


def _partitions(broker: Broker, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "probe"})
    try:
        meta = consumer.list_topics(topic, timeout=10).topics[topic]
        return len(meta.partitions)
    finally:
        consumer.close()


def test_channel_returns_good_and_bad_in_order_and_logs_bad_once(
        broker: Broker, unique_name: str, caplog: pytest.LogCaptureFixture) -> None:
    config = _config(broker, unique_name)
    key = unique_name.encode()
    with SignalChannel(config) as channel:
        channel.open(None)
        assert channel.next_offset == 0
        produce(broker.bootstrap, config.signal_kafka_topic, [
            (key, _value("execute-snapshot", **{"data-collections": ["app.orders"]})),
            (b"someone-else", _value("log", message="not for us")),
            (key, b"{not json"),
            (key, _value("explode")),
            (key, _value("set-throttle", **{"chunk-size": 10})),
        ])
        with caplog.at_level(logging.WARNING, logger="signals.channel"):
            got = _poll_n(channel, 5)
            assert channel.poll(1.0) == []
        assert [r.offset for r in got] == [0, 1, 2, 3, 4]
        assert isinstance(got[0].signal, ExecuteSnapshot)
        assert got[0].signal.data_collections == ["app.orders"]
        assert isinstance(got[4].signal, SetThrottle) and got[4].signal.chunk_size == 10
        assert [r.signal for r in got[1:4]] == [None, None, None]
        reasons = [r.reason or "" for r in got[1:4]]
        assert "key 'someone-else'" in reasons[0]
        assert "not JSON" in reasons[1]
        assert "unknown type 'explode'" in reasons[2]
        assert channel.next_offset == 5
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 3
    for offset, reason in zip((1, 2, 3), reasons, strict=True):
        assert sum(f"offset {offset} skipped: {reason}" in w for w in warnings) == 1


def test_open_creates_missing_topic_with_one_partition(broker: Broker, unique_name: str) -> None:
    config = _config(broker, unique_name)
    with SignalChannel(config) as channel:
        channel.open(None)
    assert _partitions(broker, config.signal_kafka_topic) == 1


def test_first_start_begins_at_the_true_end(broker: Broker, unique_name: str) -> None:
    config = _config(broker, unique_name)
    key = unique_name.encode()
    create_topic(broker.bootstrap, config.signal_kafka_topic, partitions=1)
    # One batch of three: the end is 3.
    produce(broker.bootstrap, config.signal_kafka_topic,
            [(key, _value("log", message=f"old {i}")) for i in range(3)])
    with SignalChannel(config) as channel:
        channel.open(None)
        assert channel.next_offset == 3
        produce(broker.bootstrap, config.signal_kafka_topic, [(key, _value("log", message="new"))])
        got = _poll_n(channel, 1)
        assert channel.poll(1.0) == []
    assert got[0].offset == 3 and got[0].signal == Log(message="new")
    assert channel.next_offset == 4


def test_resumes_from_stored_offset_without_repeating(broker: Broker, unique_name: str) -> None:
    config = _config(broker, unique_name)
    key = unique_name.encode()
    topic = config.signal_kafka_topic
    with SignalChannel(config) as first:
        first.open(None)
        produce(broker.bootstrap, topic, [(key, _value("log", message=m)) for m in "ab"])
        assert [r.offset for r in _poll_n(first, 2)] == [0, 1]
        stored = first.next_offset
    assert stored == 2
    produce(broker.bootstrap, topic, [(key, _value("log", message=m)) for m in "cde"])
    with SignalChannel(config) as second:
        second.open(stored)
        got = _poll_n(second, 3)
        assert second.poll(1.0) == []
        assert second.next_offset == 5
    assert [(r.offset, r.signal) for r in got] == [
        (2, Log(message="c")), (3, Log(message="d")), (4, Log(message="e"))]
    with SignalChannel(config) as third:  # a stored offset in the middle of one batch
        third.open(3)
        assert [r.offset for r in _poll_n(third, 2)] == [3, 4]


def test_stored_offset_past_the_end_reads_recreated_topic_from_start(
        broker: Broker, unique_name: str, caplog: pytest.LogCaptureFixture) -> None:
    config = _config(broker, unique_name)
    key = unique_name.encode()
    create_topic(broker.bootstrap, config.signal_kafka_topic, partitions=1)
    produce(broker.bootstrap, config.signal_kafka_topic, [(key, _value("log", message="x"))])
    with SignalChannel(config) as channel, caplog.at_level(logging.WARNING):
        channel.open(50)
        got = _poll_n(channel, 1)
    assert got[0].offset == 0 and got[0].signal == Log(message="x")
    assert any("stored offset 50 is past its end 1" in r.getMessage() for r in caplog.records)


def test_two_partition_signal_topic_is_a_config_error(broker: Broker, unique_name: str) -> None:
    config = _config(broker, unique_name)
    create_topic(broker.bootstrap, config.signal_kafka_topic, partitions=2)
    channel = SignalChannel(config)
    with pytest.raises(ConfigError) as err:
        channel.open(None)
    channel.close()
    assert str(err.value) == (f"signal.kafka.topic: {config.signal_kafka_topic} has 2 "
                              "partitions; the signal topic must have exactly one")
