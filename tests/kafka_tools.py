"""Test-side Kafka helpers, independent of the connector's own code."""

from __future__ import annotations

import json
import time
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def create_topic(bootstrap: str, topic: str, partitions: int = 1,
                 config: dict[str, str] | None = None) -> None:
    """Create `topic` (the broker's default replication factor) and wait until the
    broker's metadata shows a leader for every partition."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, partitions, -1, config=config or {})])
    for future in futures.values():
        try:
            future.result(10)
        except KafkaException as exc:
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise
    deadline = time.monotonic() + 10
    while True:
        meta = admin.list_topics(topic=topic, timeout=5).topics.get(topic)
        if meta is not None and meta.error is None and len(meta.partitions) == partitions \
                and all(p.leader >= 0 for p in meta.partitions.values()):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"topic {topic} not in the metadata 10 s after its creation")
        time.sleep(0.05)


def high_watermark(bootstrap: str, topic: str, partition: int = 0) -> int:
    """The partition's next offset: its records so far in a topic never compacted; 0 while
    the topic does not exist yet."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "tests-watermarks"})
    try:
        return int(consumer.get_watermark_offsets(TopicPartition(topic, partition),
                                                  timeout=10)[1])
    except KafkaException as exc:
        if exc.args and exc.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
            return 0
        raise
    finally:
        consumer.close()


def list_topics(bootstrap: str) -> set[str]:
    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


def consume_all(bootstrap: str, topic: str, timeout: float = 30.0) -> list[Message]:
    """Every message of `topic` from offset 0 to its end, in partition order.

    The end is found with partition-EOF events, not ListOffsets: in a transactional topic
    the last offsets are commit markers that no consumer receives.
    """
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "tests-reader",
                         "isolation.level": "read_committed",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "enable.partition.eof": True, "fetch.wait.max.ms": 10})
    try:
        meta = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if meta is None or meta.error is not None:
            return []
        partitions = sorted(meta.partitions)
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        by_partition: dict[int, list[Message]] = {p: [] for p in partitions}
        done: set[int] = set()
        while len(done) < len(partitions):
            msg = consumer.poll(timeout)
            if msg is None:
                raise TimeoutError(f"{topic}: no end of partition seen in {timeout}s")
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    done.add(msg.partition())
                    continue
                raise KafkaException(err)
            by_partition[msg.partition()].append(msg)
        return [m for p in partitions for m in by_partition[p]]
    finally:
        consumer.close()


def header_value(raw: bytes | None) -> Any:
    """A header as tests/debezium_runner.py reads Debezium's: JSON, else its text."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def json_records(bootstrap: str, topics: list[str], strip: str = "") -> list[dict[str, Any]]:
    """Every record of `topics`, JSON key and value parsed, as tests/debezium_runner.py
    writes Debezium's; `strip` is taken off the front of the topic names."""
    out: list[dict[str, Any]] = []
    for topic in topics:
        for msg in consume_all(bootstrap, topic):
            raw = msg.headers() or []
            headers = [(k, header_value(v)) for k, v in raw]
            out.append({"topic": topic.removeprefix(strip),
                        "key": json.loads(msg.key()) if msg.key() else None,
                        "value": json.loads(msg.value()) if msg.value() else None,
                        "headers": dict(headers), "header_list": headers,
                        "header_text": {k: None if v is None else v.decode("utf-8", "replace")
                                        for k, v in raw}})
    return out


def produce(bootstrap: str, topic: str, items: list[tuple[bytes | None, bytes | None]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for key, value in items:
        producer.produce(topic, key=key, value=value)
    assert producer.flush(30) == 0


def decode_json(raw: bytes | None) -> Any:
    return None if raw is None else json.loads(raw)
