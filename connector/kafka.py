"""Small Kafka helpers shared by the offsets store, schema history, signals and status.

The end of a partition is found with partition-EOF events, never with ListOffsets alone:
the local Tansu broker reports the base offset of the last batch + 1 as the high
watermark (measured). Real Kafka gives the same answer both ways. Fetches wait at most
10 ms: with longer waits Tansu answers every fetch of a partition that keeps getting
writes (heartbeats, offsets) with new data and never reports its end (measured).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from connector.kafka_log import PROBE_LOG, connection_failure

log = logging.getLogger(__name__)

# How long a command waits for the cluster's first answer unless socket.timeout.ms says.
REACH_TIMEOUT_S = 30.0


class KafkaUnreachable(RuntimeError):
    """No broker answered; `str()` is the one line a command exits 1 with."""


def reach_timeout(settings: dict[str, Any]) -> float:
    """The client's socket.timeout.ms in seconds (a test or an impatient user sets it), else
    REACH_TIMEOUT_S."""
    try:
        return max(0.1, float(settings["socket.timeout.ms"]) / 1000)
    except (KeyError, ValueError):
        return REACH_TIMEOUT_S


def require_kafka(settings: dict[str, Any], setting: str = "bootstrap.servers",
                  timeout: float | None = None) -> None:
    """Return once the cluster answers a metadata request; else raise KafkaUnreachable
    naming `setting` (where the address came from) and librdkafka's reason."""
    wait = reach_timeout(settings) if timeout is None else timeout
    servers = str(settings.get("bootstrap.servers", ""))
    consumer = Consumer({**settings, "logger": PROBE_LOG, "group.id": "gtidmark-probe",
                         "enable.auto.commit": False})
    deadline = time.monotonic() + wait
    try:
        while True:
            left = deadline - time.monotonic()
            try:
                consumer.list_topics(timeout=max(0.05, min(1.0, left)))
                return
            except KafkaException as exc:
                consumer.poll(0)  # serves the queued log lines: the first failure shows now
                if left <= 1.0:
                    reason = connection_failure(servers) or (
                        f"no answer within {wait:g}s ({exc.args[0].str()})")
                    raise KafkaUnreachable(f"cannot reach Kafka at {servers} ({setting}): "
                                           f"{reason[:1].lower()}{reason[1:]}") from None
    finally:
        consumer.close()

_M = 0x5BD1E995


def murmur2(data: bytes) -> int:
    """Kafka's Java `Utils.murmur2` (seed 0x9747b28c), as a signed 32-bit int."""
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * _M) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * _M) & 0xFFFFFFFF
        h = ((h * _M) & 0xFFFFFFFF) ^ k
    tail = data[whole:]
    if len(tail) == 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if tail:
        h ^= tail[0]
        h = (h * _M) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * _M) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h >= 1 << 31 else h


def key_partition(key: bytes, partitions: int) -> int:
    """The partition the Java producer's default partitioner picks for a keyed record."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


class TopicAdmin:
    """Creates topics once (no broker auto-creation is assumed) and remembers them."""

    def __init__(self, settings: dict[str, str], partitions: int = 1) -> None:
        conf: dict[str, Any] = {**settings, "allow.auto.create.topics": False}
        self._admin = AdminClient(conf)
        self._known: set[str] = set()
        self._partitions = partitions

    def partitions_of(self, topic: str, timeout: float = 10.0) -> int | None:
        meta = self._admin.list_topics(topic=topic, timeout=timeout).topics.get(topic)
        self._admin.poll(0)  # its log lines (an admin client's wait only for a poll)
        if meta is None or meta.error is not None:
            return None
        return len(meta.partitions)

    def topic_config(self, topic: str, name: str, timeout: float = 10.0) -> str | None:
        """A topic's setting as the broker reports it; None when the broker omits it."""
        resource = ConfigResource(ResourceType.TOPIC, topic)
        entries = self._admin.describe_configs([resource])[resource].result(timeout)
        entry = entries.get(name)
        return None if entry is None else str(entry.value)

    def ensure(self, topics: Iterable[str], config: dict[str, str] | None = None,
               partitions: int | None = None, timeout: float = 30.0) -> None:
        wanted = [t for t in topics if t not in self._known]
        if not wanted:
            return
        existing = set(self._admin.list_topics(timeout=timeout).topics)
        self._admin.poll(0)
        missing = [t for t in wanted if t not in existing]
        if missing:
            futures = self._admin.create_topics(
                [NewTopic(t, partitions or self._partitions, 1, config=config or {})
                 for t in missing])
            for topic, future in futures.items():
                try:
                    future.result(timeout)
                    log.info("created topic %s", topic)
                except KafkaException as exc:
                    if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                        raise
        self._known.update(wanted)


def read_all_partitions(settings: dict[str, str], topic: str,
                        timeout: float = 30.0) -> tuple[list[Message], int]:
    """Every message of every partition of `topic` to its end, and the partition count."""
    consumer = Consumer({**settings, "group.id": f"gtidmark-reader-{topic}",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "auto.offset.reset": "earliest", "fetch.wait.max.ms": 10})
    try:
        meta = consumer.list_topics(topic, timeout=timeout).topics.get(topic)
        if meta is None or meta.error is not None:
            return [], 0
        consumer.assign([TopicPartition(topic, p, 0) for p in meta.partitions])
        left = set(meta.partitions)
        out: list[Message] = []
        deadline = time.monotonic() + timeout
        while left:
            if time.monotonic() > deadline:
                raise TimeoutError(f"reading {topic} to its end took more than {timeout:.0f}s")
            for msg in consumer.consume(10_000, 1.0):
                err = msg.error()
                if err is None:
                    out.append(msg)
                elif err.code() == KafkaError._PARTITION_EOF:
                    left.discard(msg.partition())
                else:
                    raise KafkaException(err)
        return out, len(meta.partitions)
    finally:
        consumer.close()


def read_to_end(settings: dict[str, str], topic: str, start: int = 0, partition: int = 0,
                timeout: float = 30.0) -> list[Message]:
    """All messages of one partition from `start` to its current end."""
    consumer = Consumer({**settings, "group.id": f"gtidmark-reader-{topic}",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "auto.offset.reset": "earliest", "fetch.wait.max.ms": 10})
    try:
        consumer.assign([TopicPartition(topic, partition, start)])
        out: list[Message] = []
        deadline = time.monotonic() + timeout
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError(f"reading {topic} to its end took more than {timeout:.0f}s")
            batch = consumer.consume(10_000, 1.0)
            for msg in batch:
                err = msg.error()
                if err is None:
                    out.append(msg)
                elif err.code() == KafkaError._PARTITION_EOF:
                    return out
                else:
                    raise KafkaException(err)
    finally:
        consumer.close()
