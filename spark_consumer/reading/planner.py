"""Driver side: which offset range of each topic partition the next micro-batch reads.

Start offsets come from the Iceberg tables (exactly-once); ends are the partition ends a
read_committed consumer reaches, found with partition-EOF: in a transactional topic that is
the last stable offset, and the last offsets are commit markers no consumer receives.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient

from connector.kafka.client_log import KAFKA_LOG

log = logging.getLogger(__name__)

TP = tuple[str, int]


@dataclass(frozen=True, slots=True)
class OffsetRange:
    """Offsets [start, end) of one topic partition; one Spark task reads one range."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return max(0, self.end - self.start)


class KafkaRequestFailed(RuntimeError):
    """A planning request Kafka did not answer; the message names the request and broker."""


def _failed(conf: dict[str, str], what: str, exc: KafkaException) -> KafkaRequestFailed:
    error = exc.args[0]
    text = error.str() if isinstance(error, KafkaError) else str(exc)
    return KafkaRequestFailed(f"{what} from Kafka at {conf.get('bootstrap.servers')}: {text}")


def _topics(consumer: Consumer, conf: dict[str, str], topic: str | None,
            timeout: float) -> dict[str, Any]:
    try:
        return dict(consumer.list_topics(topic, timeout=timeout).topics)
    except KafkaException as exc:
        raise _failed(conf, "the topic list" if topic is None else f"topic {topic}",
                      exc) from None


def _watermarks(consumer: Consumer, conf: dict[str, str], tp: TP,
                timeout: float) -> tuple[int, int]:
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(*tp), timeout=timeout)
    except KafkaException as exc:
        raise _failed(conf, f"the offsets of {tp[0]}[{tp[1]}]", exc) from None
    return int(low), int(high)


def _consumer(conf: dict[str, str], eof: bool) -> Consumer:
    settings: dict[str, object] = {"logger": KAFKA_LOG, "group.id": "gtidmark-spark-apply",
                                   "enable.auto.commit": False, "auto.offset.reset": "earliest",
                                   "enable.partition.eof": eof}
    if eof:
        # Short fetch waits: a fetch at the end of a partition waits this long for new data
        # before the end is reported (500 ms by default).
        settings["fetch.wait.max.ms"] = 10
    settings.update(conf)
    return Consumer(settings)


def names_topic(topic: str, topics: list[str] | None, pattern: str | None) -> bool:
    """Whether --topics (when given) or else --topic-pattern names `topic`."""
    if topics:
        return topic in topics
    return pattern is not None and re.fullmatch(pattern, topic) is not None


def resolve_topics(conf: dict[str, str], topics: list[str] | None,
                   pattern: str | None, timeout: float = 10.0) -> list[str]:
    """The topics to read: the named ones, or every non-internal topic matching `pattern`."""
    if topics:
        return sorted(set(topics))
    if pattern is None:
        return []
    consumer = _consumer(conf, eof=False)
    try:
        names = _topics(consumer, conf, None, timeout)
    finally:
        consumer.close()
    return sorted(t for t in names if names_topic(t, None, pattern) and not t.startswith("__"))


def partitions_of(conf: dict[str, str], topics: list[str],
                  timeout: float = 10.0) -> dict[str, list[int]]:
    """Partition ids per topic; a topic that does not exist (yet) has none."""
    consumer = _consumer(conf, eof=False)
    try:
        result: dict[str, list[int]] = {}
        for topic in topics:
            meta = _topics(consumer, conf, topic, timeout).get(topic)
            if meta is None or meta.error is not None:
                log.warning("topic %s not found; skipped this batch", topic)
                result[topic] = []
            else:
                result[topic] = sorted(meta.partitions)
        return result
    finally:
        consumer.close()


NO_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"  # the null UUID: the broker does not give topic ids


def topic_ids(conf: dict[str, str], topics: list[str], timeout: float = 10.0) -> dict[str, str]:
    """Kafka topic ids (they change when a topic is deleted and created again); {} if unknown."""
    if not topics:
        return {}
    settings: dict[str, Any] = {"logger": KAFKA_LOG, **conf}
    admin = AdminClient(settings)
    out: dict[str, str] = {}
    try:
        futures = admin.describe_topics(TopicCollection(topics), request_timeout=timeout)
    except (KafkaException, NotImplementedError, TypeError) as exc:
        log.debug("describe_topics not available: %s", exc)
        return {}
    for topic, future in futures.items():
        try:  # the request's own timeout answers first; ours only guards a lost answer
            description = future.result(timeout + 5)
        except KafkaException:
            continue
        except TimeoutError:
            raise TimeoutError(f"describing topic {topic} at Kafka "
                               f"{conf.get('bootstrap.servers')}: no answer within "
                               f"{timeout + 5:.0f}s") from None
        finally:
            admin.poll(0)  # its log lines
        ident = str(getattr(description, "topic_id", None) or "")
        if ident and ident != NO_TOPIC_ID:
            out[topic] = ident
    return out


def low_watermarks(conf: dict[str, str], tps: list[TP], timeout: float = 10.0) -> dict[TP, int]:
    """The first offset still stored in each partition (retention moves it forward)."""
    consumer = _consumer(conf, eof=False)
    try:
        return {tp: _watermarks(consumer, conf, tp, timeout)[0] for tp in tps}
    finally:
        consumer.close()


def true_ends(conf: dict[str, str], tps: list[TP], timeout: float = 30.0) -> dict[TP, int]:
    """The end offset of each partition, as the partition-EOF event reports it.

    The ListOffsets high watermark is where reading starts (just below it): the EOF then
    says where a read_committed consumer ends, at most one producer batch later.
    """
    if not tps:
        return {}
    consumer = _consumer(conf, eof=True)
    try:
        assignment = []
        for topic, partition in tps:
            _, high = _watermarks(consumer, conf, (topic, partition), timeout)
            assignment.append(TopicPartition(topic, partition, max(0, high - 1)))
        consumer.assign(assignment)
        ends: dict[TP, int] = {}
        deadline = time.monotonic() + timeout
        while len(ends) < len(tps):
            if time.monotonic() > deadline:
                missing = sorted(set(tps) - set(ends))
                raise TimeoutError(f"no end of partition seen in {timeout:.0f}s for {missing}")
            for msg in consumer.consume(500, 1.0):
                err = msg.error()
                if err is None:
                    continue
                if err.code() == KafkaError._PARTITION_EOF:
                    tp = (str(msg.topic()), int(msg.partition() or 0))
                    ends[tp] = int(msg.offset() or 0)
                    consumer.pause([TopicPartition(tp[0], tp[1])])
                else:
                    raise KafkaException(err)
        return ends
    finally:
        consumer.close()


def plan_ranges(starts: dict[TP, int], ends: dict[TP, int], cap: int | None) -> list[OffsetRange]:
    """One range per partition in `ends`, all together at most `cap` offsets (fair shares).

    A start beyond the end (the topic was recreated) gives an empty range and a warning.
    """
    tps = sorted(ends)
    lag = {}
    for tp in tps:
        start = starts.get(tp, 0)
        if start > ends[tp]:
            log.warning("%s[%d]: table offset %d is beyond the topic end %d (topic recreated?)",
                        tp[0], tp[1], start, ends[tp])
        lag[tp] = max(0, ends[tp] - start)
    alloc = dict.fromkeys(tps, 0)
    if cap is None:
        alloc = dict(lag)
    else:
        remaining = max(0, cap)
        pending = [tp for tp in tps if lag[tp] > 0]
        while pending and remaining > 0:
            share = max(1, remaining // len(pending))
            for tp in list(pending):
                give = min(lag[tp] - alloc[tp], share, remaining)
                alloc[tp] += give
                remaining -= give
                if alloc[tp] == lag[tp]:
                    pending.remove(tp)
                if remaining == 0:
                    break
    return [OffsetRange(t, p, starts.get((t, p), 0), starts.get((t, p), 0) + alloc[(t, p)])
            for t, p in tps]
