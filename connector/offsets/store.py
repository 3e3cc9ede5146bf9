"""Connector offsets in a compacted Kafka topic, in Kafka Connect's shape.

Key: ["<name>", {"server": "<topic.prefix>"}]; value: a `ConnectorOffsets`. A record is
written only after every change event produced before it has been acknowledged (see
`Checkpoint`). Records go to the partition Kafka Connect's Java producer would pick
(murmur2 of the key), so a topic shared with Kafka Connect (25 partitions by default) keeps
one place per connector; loading reads every partition and applies `resume`'s rule.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections import deque
from dataclasses import dataclass, field

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from connector.kafka.internal_topics import check_offsets_topic, offsets_spec
from connector.kafka.partitioner import key_partition
from connector.kafka.reading import read_all_partitions
from connector.kafka.sink import DeliveryFailed, Sink
from connector.kafka.topics import TopicAdmin
from connector.leadership.lease import Instance
from connector.offsets.debezium import from_debezium
from connector.offsets.resume import OffsetRecord, Resumed, resume_point
from connector.offsets.value import ConnectorOffsets, written_by_gtidmark
from connector.settings.model import ConnectorConfig

log = logging.getLogger(__name__)

# Kafka Connect's offset.flush.timeout.ms default: after this long without a commit while
# newer state waits, say so (the producer itself keeps retrying).
COMMIT_STALL_WARNING_S = 5.0


class OffsetsWriteFailed(DeliveryFailed):
    """Kafka refused an offsets record for good: stop rather than stream without a restart point."""


def offset_key(config: ConnectorConfig) -> bytes:
    return json.dumps([config.name, {"server": config.topic_prefix}],
                      separators=(",", ":")).encode()


def parse_offsets(raw: bytes) -> ConnectorOffsets:
    data = json.loads(raw)
    return ConnectorOffsets.from_json(data) if written_by_gtidmark(data) else from_debezium(data)


def read_resume_point(config: ConnectorConfig) -> Resumed:
    """Where the connector resumes, and who holds the newest epoch (no topic created)."""
    key = offset_key(config)
    messages, partitions = read_all_partitions(config.consumer_settings(), config.offsets_topic)
    records = [OffsetRecord(m.partition() or 0, m.offset() or 0, m.timestamp()[1], m.value())
               for m in messages if m.key() == key]
    return resume_point(records, key_partition(key, partitions) if partitions else 0)


def read_committed(config: ConnectorConfig) -> ConnectorOffsets | None:
    """The connector's committed offsets as any reader sees them (no topic created)."""
    raw = read_resume_point(config).value
    return None if raw is None else parse_offsets(raw)


@dataclass(slots=True)
class Checkpoint:
    produced: int  # records handed to the sink before this state
    state: ConnectorOffsets
    noted_at: float = field(default_factory=time.monotonic)


class OffsetStore:
    """Built without I/O; `open` (part of a start) creates or checks the topic and connects."""

    def __init__(self, config: ConnectorConfig) -> None:
        self._config = config
        self._topic = config.offsets_topic
        self._key = offset_key(config)
        self.partition = -1  # the key's partition, known once open
        self._producer: Producer | None = None
        self._pending: deque[Checkpoint] = deque()
        self.committed: ConnectorOffsets | None = None
        self.failure: str | None = None
        self._unacked = 0
        self._waiting_since: float | None = None  # newer state not yet acknowledged, since
        self._stall_reported = False

    def open(self, admin: TopicAdmin) -> None:
        """Create the compacted topic or check it, and connect the producer."""
        admin.ensure([self._topic], spec=offsets_spec(self._config))
        partitions = check_offsets_topic(admin, self._topic)
        self.partition = key_partition(self._key, partitions)
        # Writes never expire: a slow broker delays a commit rather than stop the instance.
        # A frozen leader's write that lands after its successor's is harmless: the
        # successor writes in a higher epoch, and loading ignores the lower one.
        self._producer = Producer({**self._config.producer_settings(),
                                   "enable.idempotence": True, "message.timeout.ms": 0,
                                   "linger.ms": 0})

    def _opened(self) -> Producer:
        if self._producer is None:
            raise RuntimeError(f"offsets store for {self._topic} used before open()")
        return self._producer

    def load(self) -> tuple[ConnectorOffsets | None, int]:
        """The committed value for this connector (None on first start or after a reset),
        and the highest writer epoch on the topic (0 before any)."""
        found = read_resume_point(self._config)
        self.committed = None if found.value is None else parse_offsets(found.value)
        return self.committed, found.epoch

    def epoch_holder(self) -> tuple[int, object]:
        """The highest writer epoch on the topic now and its owner (`resume.CLOSED`
        after a reset)."""
        found = read_resume_point(self._config)
        return found.epoch, found.owner

    def abandon(self) -> None:
        """Drop what is not written yet: a fenced instance must not commit it later."""
        self._pending.clear()
        self._opened().purge()

    def checkpoint(self, produced: int, state: ConnectorOffsets) -> None:
        """Remember `state`; it is committed once the first `produced` records are acked."""
        if state != self.committed and self._waiting_since is None:
            self._waiting_since = time.monotonic()
        if self._pending and self._pending[-1].produced == produced:
            self._pending[-1] = Checkpoint(produced, state)
        else:
            self._pending.append(Checkpoint(produced, state))

    def commit_acked(self, sink: Sink) -> bool:
        """Write the newest checkpoint whose records are all acknowledged; True if written."""
        self._opened().poll(0)
        self._check()
        pending = self._pending
        if not pending or not sink.all_acked(pending[0].produced):
            return False
        ready = pending.popleft()
        while pending and sink.all_acked(pending[0].produced):
            ready = pending.popleft()
        if ready.state == self.committed:
            return False
        self._write(ready.state)
        return True

    def record(self, state: ConnectorOffsets) -> tuple[str, bytes, bytes, int]:
        """`state` as the offsets record (topic, key, value, partition) a transaction takes."""
        self._opened()
        return self._topic, self._key, state.to_bytes(), self.partition

    def committed_in_transaction(self, state: ConnectorOffsets) -> None:
        """`state` was committed with its records in one Kafka transaction."""
        self._pending.clear()
        self._waiting_since = None
        self.committed = state

    def seed(self, state: ConnectorOffsets) -> None:
        """Write `state` at once, with no records to wait for (benchmark start positions)."""
        self._write(state)

    def _check(self) -> None:
        if self.failure is not None:
            raise OffsetsWriteFailed(self.failure)
        since = self._waiting_since
        if since is None or self._stall_reported:
            return
        waited = time.monotonic() - since
        if waited >= COMMIT_STALL_WARNING_S:
            log.warning("offsets not committed to %s for %.0fs (%d offsets writes "
                        "unacknowledged); the producer keeps retrying", self._topic, waited,
                        self._unacked)
            self._stall_reported = True

    def _delivered(self, err: KafkaError | None, _msg: Message) -> None:
        self._unacked -= 1
        if err is not None:
            self.failure = f"offsets write to {self._topic} failed: {err.str()}"
        else:  # the stall clock restarts at each acknowledgement
            waiting = self._unacked > 0 or bool(self._pending)
            self._waiting_since = time.monotonic() if waiting else None
            if self._stall_reported:
                log.info("offsets committed to %s again", self._topic)
                self._stall_reported = False

    def _write(self, state: ConnectorOffsets) -> None:
        producer = self._opened()
        try:
            producer.produce(self._topic, state.to_bytes(), self._key,
                             partition=self.partition, on_delivery=self._delivered)
        except (KafkaException, BufferError) as exc:
            raise OffsetsWriteFailed(f"offsets write to {self._topic} failed: {exc}") from exc
        self._unacked += 1
        producer.poll(0)
        self.committed = state

    def flush(self, timeout: float) -> bool:
        return self._opened().flush(timeout) == 0 and self.failure is None

    def uncommitted_age(self) -> float:
        """Seconds the oldest noted state has waited for its commit; 0 when none waits."""
        return time.monotonic() - self._pending[0].noted_at if self._pending else 0.0

    def replace(self, state: ConnectorOffsets | None, timeout: float) -> bool:
        """Write `state` (None: a tombstone, forgetting the position) now; True once acked.

        Only while nothing streams: Kafka Connect's PATCH/DELETE offsets on a stopped
        connector. A value takes the next epoch, so that it wins on load and a late record
        of an earlier writer does not; a tombstone closes the current epoch.
        """
        self._pending.clear()
        if state is None:
            self._opened().produce(self._topic, None, self._key, partition=self.partition)
        else:
            epoch, _ = self.epoch_holder()
            state = dataclasses.replace(state, epoch=epoch + 1, writer=Instance.here())
            self._write(state)
        self.committed = state
        return self.flush(timeout)
