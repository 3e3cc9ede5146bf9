"""Reading a topic to its end: the offsets, signal and schema-history topics at start.

The end of a partition is found with partition-EOF events, not a ListOffsets high watermark:
with transactional producers the last offsets are commit markers no consumer ever receives,
and a read_committed consumer stops at the last stable offset; EOF is right in both cases.
"""

from __future__ import annotations

import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition


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
