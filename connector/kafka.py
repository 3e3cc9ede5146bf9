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
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

log = logging.getLogger(__name__)


class TopicAdmin:
    """Creates topics once (no broker auto-creation is assumed) and remembers them."""

    def __init__(self, settings: dict[str, str], partitions: int = 1) -> None:
        conf: dict[str, Any] = {**settings, "allow.auto.create.topics": False}
        self._admin = AdminClient(conf)
        self._known: set[str] = set()
        self._partitions = partitions

    def partitions_of(self, topic: str, timeout: float = 10.0) -> int | None:
        meta = self._admin.list_topics(topic=topic, timeout=timeout).topics.get(topic)
        if meta is None or meta.error is not None:
            return None
        return len(meta.partitions)

    def ensure(self, topics: Iterable[str], config: dict[str, str] | None = None,
               partitions: int | None = None, timeout: float = 30.0) -> None:
        wanted = [t for t in topics if t not in self._known]
        if not wanted:
            return
        existing = set(self._admin.list_topics(timeout=timeout).topics)
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
