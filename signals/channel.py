"""The Kafka signal channel: reads the single-partition signal topic from a stored offset.

The connector keeps `next_offset` in its own offsets (not in consumer-group commits), so a
signal is acted on exactly once across restarts. On a first start (no stored offset) the
channel starts at the topic's current end: signals sent before the connector ever ran are
not replayed (pass `from_beginning=True` to read them). A signal the last runs were acting
on when they ended (`unfinished`, see connector/offsets/signal_mark.py) is acted on again,
and skipped in one line once `MAX_ATTEMPTS` starts each ended while acting on it. Records
put back (an action that could not be done yet) are returned again after a backoff.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Self

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition
from confluent_kafka.admin import AdminClient

from connector.kafka.topic_creation import TopicSpec
from connector.kafka.topics import create_topics
from connector.offsets.mark import MAX_ATTEMPTS, SignalMark
from connector.settings.errors import ConfigError
from connector.settings.model import ConnectorConfig
from signals.models import Signal, SignalRejected, parse_signal, signal_key

log = logging.getLogger(__name__)
KAFKA_LOG = logging.getLogger("signals.kafka")  # librdkafka's own lines, via Python logging

PARTITION = 0
OPEN_TIMEOUT_S = 30.0
MAX_BATCH = 500
RETRY_FIRST_S = 1.0  # the backoff of a signal put back: doubled each time, up to the max
RETRY_MAX_S = 30.0
# Settings an admin client may share with the consumer/producer (connection and security).
_SHARED_PREFIXES = ("bootstrap.servers", "security.", "ssl.", "sasl.", "client.", "socket.",
                    "broker.address.family", "metadata.")


class SignalChannelError(RuntimeError):
    """The signal topic could not be reached or read; one line for the operator."""


@dataclass(frozen=True)
class SignalRecord:
    """One record of the signal topic, not read yet: reading it is acting on it."""

    offset: int
    key: bytes | None
    value: bytes | None


@dataclass(frozen=True)
class ReceivedSignal:
    """One signal read: a valid signal, or None with the reason it was skipped. `offset` is
    its record's in the signal topic; `origin` names a row of the signal table instead."""

    offset: int
    signal: Signal | None
    reason: str | None
    origin: str | None = None

    @property
    def where(self) -> str:
        """How the log lines name it: `signal at offset N`, `signal from db.t (GTID g, row i)`."""
        return f"signal {self.origin}" if self.origin else f"signal at offset {self.offset}"


def signal_client_settings(config: ConnectorConfig, base: dict[str, str]) -> dict[str, str]:
    """`base` (producer or consumer settings) pointed at the signal cluster when configured."""
    settings = dict(base)
    if config.signal_bootstrap_servers:
        settings["bootstrap.servers"] = config.signal_bootstrap_servers
    return settings


def admin_settings(settings: dict[str, str]) -> dict[str, Any]:
    """Only the connection/security part: admin clients warn on consumer-only settings."""
    shared: dict[str, Any] = {
        k: v for k, v in settings.items() if k.startswith(_SHARED_PREFIXES)}
    # A metadata request for one topic would otherwise create it with the broker's default
    # partition count where the broker auto-creates topics, defeating the one-partition check.
    shared["allow.auto.create.topics"] = False
    return shared


def ensure_signal_topic(settings: dict[str, str], topic: str, timeout: float, *,
                        client_logger: Any = None) -> None:
    """Create `topic` with one partition if missing; ConfigError if it has more than one."""
    conf = admin_settings(settings)
    conf["logger"] = client_logger or KAFKA_LOG
    admin = AdminClient(conf)
    deadline = time.monotonic() + timeout
    where = settings.get("bootstrap.servers", "?")
    partitions = _partition_count(admin, topic, timeout, where)
    if partitions is None:
        try:
            partitions = create_topics(admin, {topic: TopicSpec(partitions=1)},
                                       max(1.0, deadline - time.monotonic()))[topic]
        except KafkaException as exc:
            raise SignalChannelError(f"cannot create signal topic {topic}: "
                                     f"{_kafka_reason(exc)}") from None
    if partitions != 1:
        raise ConfigError(f"signal.kafka.topic: {topic} has {partitions} partitions; "
                          "the signal topic must have exactly one")


def _partition_count(admin: AdminClient, topic: str, timeout: float,
                     where: str) -> int | None:
    try:
        meta = admin.list_topics(topic=topic, timeout=timeout).topics.get(topic)
    except KafkaException as exc:
        raise SignalChannelError(f"cannot reach Kafka at {where} (signal topic {topic}) within "
                                 f"{timeout:.0f}s: {_kafka_reason(exc)}") from None
    if meta is None or meta.error is not None or not meta.partitions:
        return None
    return len(meta.partitions)


def _kafka_reason(exc: KafkaException) -> str:
    err = exc.args[0] if exc.args else None
    return err.str() if isinstance(err, KafkaError) else str(exc)


class SignalChannel:
    """Reads signals for one connector; the caller stores `next_offset` with its offsets."""

    def __init__(self, config: ConnectorConfig) -> None:
        self.topic = config.signal_kafka_topic
        self.enabled = config.kafka_signals  # signal.enabled.channels without kafka: no reads
        self.expected_key = config.topic_prefix
        self._settings = signal_client_settings(config, config.consumer_settings())
        self._group = f"{config.name}-signals"
        self._consumer: Consumer | None = None
        self._next_offset = 0
        self._unfinished: SignalMark | None = None
        self._returned: list[SignalRecord] = []  # put back: fetched again at `_retry_at`
        self._retry_at = 0.0
        self._retries = 0  # of the record `_returned` starts with
        self._returned_first: int | None = None

    @property
    def next_offset(self) -> int | None:
        """The offset after the last record returned by `poll` (or the start position);
        None when the channel is not enabled, so a later start with it reads from the end."""
        return self._next_offset if self.enabled else None

    @property
    def unfinished(self) -> SignalMark | None:
        """The mark of the signal the last runs did not finish acting on, until it is passed
        (the offsets keep it till then, with its count of attempts)."""
        if self._unfinished is None or self._next_offset > self._unfinished.offset:
            return None
        return self._unfinished

    def open(self, next_offset: int | None, *, unfinished: SignalMark | None = None,
             from_beginning: bool = False, timeout: float = OPEN_TIMEOUT_S) -> None:
        """Check/create the topic and start reading at `next_offset` (None: first start);
        the record `unfinished` marks is acted on again, or skipped once exhausted. Not
        enabled: nothing is read, and signals sent meanwhile are never acted on."""
        if not self.enabled:
            log.info("signal.enabled.channels has no kafka: signal topic %s is not read",
                     self.topic)
            return
        ensure_signal_topic(self._settings, self.topic, timeout)
        consumer = Consumer({
            **self._settings,
            "group.id": self._group,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "enable.partition.eof": True,
            "logger": KAFKA_LOG,
            # Only used when a stored offset is out of range (the topic was recreated).
            "auto.offset.reset": "earliest",
        })
        self._consumer = consumer
        self._returned = []
        if from_beginning and next_offset is None:
            next_offset = 0
        high = self._watermark(consumer, timeout)
        if next_offset is None:  # first start: what is there now is not replayed
            self._next_offset = high
        elif next_offset > high:
            log.warning("signal topic %s: stored offset %d is past its end %d (was the "
                        "topic recreated?); reading it from offset 0",
                        self.topic, next_offset, high)
            self._next_offset = 0
        else:
            self._next_offset = next_offset
        consumer.assign([TopicPartition(self.topic, PARTITION, self._next_offset)])
        self._unfinished = unfinished if next_offset is not None and next_offset == \
            self._next_offset else None  # a position moved by a recreated topic drops it
        log.info("signal channel %s: reading from offset %d", self.topic, self._next_offset)

    def _watermark(self, consumer: Consumer, timeout: float) -> int:
        """The end of the partition: its high watermark."""
        try:
            _, high = consumer.get_watermark_offsets(
                TopicPartition(self.topic, PARTITION), timeout=timeout)
        except KafkaException as exc:
            raise SignalChannelError(f"cannot read the end of signal topic {self.topic}: "
                                     f"{_kafka_reason(exc)}") from None
        return max(0, int(high))

    def poll(self, timeout: float = 0.0) -> list[ReceivedSignal]:
        """Signals that arrived since the last call, read, in order; waits at most `timeout` s."""
        return [self.read(record) for record in self.fetch(timeout)]

    def fetch(self, timeout: float = 0.0) -> list[SignalRecord]:
        """Records that arrived since the last call, in order, not read; waits at most
        `timeout` s. `next_offset` moves past them: read each before the next checkpoint."""
        if not self.enabled:
            return []
        consumer = self._require_open()
        received: list[SignalRecord] = []
        if self._returned:
            if time.monotonic() < self._retry_at:
                return received
            received, self._returned = self._returned, []
            self._next_offset = received[-1].offset + 1
            timeout = 0.0
        batch = consumer.consume(num_messages=MAX_BATCH, timeout=timeout)
        for msg in batch:
            err = msg.error()
            if err is not None:
                self._on_error(err)
                continue
            offset = _offset(msg)
            if msg.partition() != PARTITION or offset < self._next_offset:
                continue  # already returned (duplicate delivery after a reset)
            received.append(SignalRecord(offset, msg.key(), msg.value()))
            self._next_offset = offset + 1
        return received

    def put_back(self, records: list[SignalRecord]) -> float:
        """`records` (in order, the first one not acted on yet) are fetched again after a
        backoff, returned in seconds; `next_offset` goes back to the first."""
        first = records[0].offset
        self._retries = self._retries + 1 if self._returned_first == first else 1
        self._returned_first = first
        delay = min(RETRY_MAX_S, RETRY_FIRST_S * 2.0 ** (self._retries - 1))
        self._returned = list(records)
        self._next_offset = first
        self._retry_at = time.monotonic() + delay
        return delay

    def _exhausted(self, record: SignalRecord) -> bool:
        unfinished = self._unfinished
        return unfinished is not None and unfinished.offset == record.offset and \
            unfinished.exhausted

    def mark_for(self, record: SignalRecord) -> SignalMark:
        """The in-progress mark to write before acting on `record`: the attempt after the
        last runs' ones when they ended while acting on it, else the first."""
        unfinished = self._unfinished
        if unfinished is not None and unfinished.offset == record.offset:
            return unfinished.next_attempt()
        return SignalMark(record.offset)

    def acts_on(self, record: SignalRecord) -> bool:
        """Reading `record` may act on a signal: it carries this connector's key and is not
        one that every allowed start died acting on (skipped unread, in one line)."""
        return not self._exhausted(record) and signal_key(record.key) == self.expected_key

    def read(self, record: SignalRecord) -> ReceivedSignal:
        """The record as a signal, or None and the reason, logged in one line."""
        offset = record.offset
        if self._exhausted(record):
            reason = (f"the last {MAX_ATTEMPTS} runs each ended while acting on it (killed "
                      "or crashed?); it is not acted on again")
            log.warning("signal topic %s offset %d skipped: %s", self.topic, offset, reason)
            return ReceivedSignal(offset, None, reason)
        unfinished = self._unfinished
        if unfinished is not None and unfinished.offset == offset:
            log.warning("signal topic %s offset %d: the last run ended while acting on it "
                        "(killed, crashed or taken over); acting on it again, attempt %d "
                        "of %d", self.topic, offset, unfinished.attempt + 1, MAX_ATTEMPTS)
        try:
            signal = parse_signal(record.key, record.value, self.expected_key)
        except SignalRejected as exc:
            log.warning("signal topic %s offset %d skipped: %s", self.topic, offset, exc.reason)
            return ReceivedSignal(offset, None, exc.reason)
        except Exception as exc:  # noqa: BLE001 - a malformed signal must never stop streaming
            reason = f"could not be read ({type(exc).__name__})"
            log.warning("signal topic %s offset %d skipped: %s", self.topic, offset, reason)
            return ReceivedSignal(offset, None, reason)
        return ReceivedSignal(offset, signal, None)

    def _on_error(self, err: KafkaError) -> None:
        if err.code() == KafkaError._PARTITION_EOF:
            return
        if err.fatal():
            raise SignalChannelError(f"signal topic {self.topic}: {err.str()}")
        log.warning("signal topic %s: %s (retrying)", self.topic, err.str())

    def _require_open(self) -> Consumer:
        if self._consumer is None:
            raise SignalChannelError("signal channel is not open")
        return self._consumer

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _offset(msg: Message) -> int:
    offset = msg.offset()
    return -1 if offset is None else int(offset)
