"""The producer side: sends records to Kafka and tracks which ones Kafka acknowledged.

Every record gets a sequence number; `acked_through` is the highest n such that all
records up to n are acknowledged, and offsets are committed only up to that point.
Records are counted in epochs (cut at each `mark`, that is each offsets checkpoint) that
share one delivery callback: a closure per record cost more than the bookkeeping. Without
HA, delivery never times out (message.timeout.ms=0), so a paused broker stalls the
connector instead of dropping records. With HA the engine bounds it (see `ha_producer`);
a failed delivery stops the engine without committing past it.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from confluent_kafka import KafkaError, KafkaException, Message, Producer

log = logging.getLogger(__name__)

PRODUCER_DEFAULTS: dict[str, Any] = {
    "enable.idempotence": True,
    "acks": "all",
    "linger.ms": 20,
    "compression.type": "lz4",
    "batch.num.messages": 10_000,
    "queue.buffering.max.messages": 500_000,
    # 32 MiB, the Java producer's buffer.memory: what a connector holds unacknowledged.
    # At librdkafka's 1 GiB a decoder faster than the broker fills it (147 MB for one
    # 100 MB transaction, against 20 MB while decoding was the slower side).
    "queue.buffering.max.kbytes": 32_768,
    "message.timeout.ms": 0,
    "partitioner": "murmur2_random",  # the Java client's partitioner: same key, same partition
}


DEFAULT_MESSAGE_MAX_BYTES = 1_000_000  # librdkafka's default message.max.bytes


class DeliveryFailed(RuntimeError):
    """Kafka refused a record for good; the connector stops without committing past it."""

    def __init__(self, reason: str, timed_out: bool = False, restart: bool = False) -> None:
        super().__init__(reason)
        self.timed_out = timed_out  # not acknowledged within message.timeout.ms
        # Nothing past the committed offsets is visible (an aborted or fenced transaction):
        # a new run resumes from them, as after a step-down.
        self.restart = restart


def ha_producer(settings: dict[str, str], session_timeout_ms: int) -> dict[str, str]:
    """Producer settings for a leader: queued records expire before a takeover can happen.

    A leader frozen (SIGSTOP, a paused VM) with records queued would send them when it
    resumes, after the new leader's newer records: an older row image would then win in
    a compacted topic or an upsert sink. A takeover needs the lease session to expire
    (> 5/6 of the session after the last queued record), and librdkafka expires queued
    records before sending on resume (measured on the local broker: nothing queued
    before a freeze longer than the timeout reached the topic). Half the session leaves
    margin; the user's own `producer.message.timeout.ms` wins.
    """
    if "message.timeout.ms" in settings or "delivery.timeout.ms" in settings:
        return settings
    return {**settings, "message.timeout.ms": str(session_timeout_ms // 2)}


class SendGuard(Protocol):
    """Asked before a record is queued after a quiet spell (`connector.leadership.fencing`)."""

    @property
    def guard_after(self) -> float: ...

    def guard(self) -> None: ...


class _Epoch:
    """A run of consecutive records sharing one delivery callback (no closure per record)."""

    __slots__ = ("end", "lost", "pending", "sink")

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.pending = 0
        self.end = -1  # sequence number after the last record; -1 while records join it
        self.lost = False  # a record failed: the acknowledged watermark never passes it

    def delivered(self, err: KafkaError | None, msg: Message) -> None:
        self.pending -= 1
        if err is None:
            return
        if err.code() == KafkaError.MSG_SIZE_TOO_LARGE:
            self.sink.too_large(str(msg.topic()), msg.key(), len(msg), "the broker's limit "
                                "(message.max.bytes, or the topic's max.message.bytes)")
        else:
            self.sink.failure = f"delivery to {msg.topic()} failed: {err.str()}"
            self.sink.timed_out = err.code() == KafkaError._MSG_TIMED_OUT
        self.lost = self.sink.failure is not None  # a record skipped on request is not lost


class Sink:
    def __init__(self, settings: dict[str, str], failure_mode: str = "fail",
                 guard: SendGuard | None = None) -> None:
        self._producer = Producer({**PRODUCER_DEFAULTS, **settings,
                                   "error_cb": self._on_error})
        self._failure_mode = failure_mode  # event.processing.failure.handling.mode
        self._max_bytes = int(settings.get("message.max.bytes", DEFAULT_MESSAGE_MAX_BYTES))
        self._produce: Callable[..., None] = self._producer.produce  # bound once: per record
        self._next_seq = 0
        self._acked_through = -1
        self._closed: deque[_Epoch] = deque()
        self._epoch = _Epoch(self)
        self._delivered = self._epoch.delivered
        self.failure: str | None = None
        self.timed_out = False  # the failure is a delivery timeout (ha_producer)
        self.restart = False  # the failure leaves nothing past the committed offsets
        self._last_error: str | None = None
        # Called before a record is queued when `guard_after` seconds passed since the
        # previous record: the leader re-checks its leadership after a pause.
        self._guard = None if guard is None else guard.guard
        self._guard_after = float("inf") if guard is None else guard.guard_after
        self._guarded_at = time.monotonic()

    @property
    def produced(self) -> int:
        """How many records have been handed to the producer so far."""
        return self._next_seq

    def mark(self) -> int:
        """`produced`, and start a new epoch there so `all_acked` can answer for it exactly."""
        self._advance()
        if self._epoch.pending or self._closed:
            self._epoch.end = self._next_seq
            self._closed.append(self._epoch)
            self._epoch = _Epoch(self)
            self._delivered = self._epoch.delivered
        return self._next_seq

    @property
    def acked_through(self) -> int:
        self._advance()
        return self._acked_through

    def all_acked(self, upto: int) -> bool:
        """True when every record with sequence number < `upto` is acknowledged.

        Exact at the sequence numbers `mark` returned, and whenever nothing is in flight;
        never after a delivery failed (no offsets may be committed from then on).
        """
        self._advance()
        return self.failure is None and self._acked_through >= upto - 1

    def _advance(self) -> None:
        """Move `acked_through` over epochs fully delivered; never into one with a lost record."""
        closed = self._closed
        while closed and closed[0].pending == 0 and not closed[0].lost:
            self._acked_through = closed.popleft().end - 1
        if not closed and self._epoch.pending == 0 and not self._epoch.lost:
            self._acked_through = self._next_seq - 1

    def send(self, topic: str, key: bytes | None, value: bytes | None,
             headers: list[tuple[str, str | bytes | None]] | None = None) -> None:
        if self._guard is not None:
            now = time.monotonic()
            if now - self._guarded_at >= self._guard_after:
                self._guard()
            self._guarded_at = now
        self._epoch.pending += 1
        self._next_seq += 1
        self._hand_over(topic, key, value, headers)

    def _hand_over(self, topic: str, key: bytes | None, value: bytes | None,
                   headers: list[tuple[str, str | bytes | None]] | None) -> None:
        """Queue a record counted in the current epoch with the producer."""
        while True:
            try:
                if headers is None:
                    self._produce(topic, value, key, on_delivery=self._delivered)
                else:
                    self._produce(topic, value, key, on_delivery=self._delivered,
                                  headers=headers)
                return
            except BufferError:
                self._wait_for_room()
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.MSG_SIZE_TOO_LARGE:
                    raise
                self._epoch.pending -= 1  # never queued: counts as acknowledged
                self.too_large(topic, key, len(key or b"") + len(value or b""),
                               f"producer.message.max.bytes={self._max_bytes}")
                self._check()
                return

    def too_large(self, topic: str, key: bytes | None, size: int, limit: str) -> None:
        """A record Kafka will never take: stop with one line, or skip it when asked to."""
        shown = _key_payload(key)
        line = (f"record for {topic} key {shown} is {size} bytes, over {limit}; raise the "
                "limit, or set event.processing.failure.handling.mode=warn to skip such records")
        if self._failure_mode == "fail":
            self.failure = line
        elif self._failure_mode == "warn":
            log.warning("skipped: %s", line)

    def _wait_for_room(self) -> None:
        self._producer.poll(0.1)
        self._check()

    def _on_error(self, err: KafkaError) -> None:
        text = err.str()
        if text != self._last_error:
            log.warning("kafka: %s", text)
            self._last_error = text
        if err.fatal():
            self.failure = f"kafka producer fatal error: {text}"

    def _check(self) -> None:
        if self.failure is not None:
            raise DeliveryFailed(self.failure, self.timed_out, self.restart)

    def poll(self, timeout: float = 0.0) -> None:
        self._producer.poll(timeout)
        self._check()

    def flush(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for every record to be acknowledged."""
        remaining = self._producer.flush(timeout)
        self._check()
        return remaining == 0 and self.all_acked(self._next_seq)

    def abandon(self) -> None:
        """Drop queued records (stepping down): fewer repeats once another instance leads."""
        self._producer.purge()
        self._producer.poll(0)

    def in_flight(self) -> int:
        return len(self._producer)


def _key_payload(key: bytes | None) -> str:
    """The key's payload for a log line (a JSON key with schema shows only its payload)."""
    text = (key or b"").decode("utf-8", "replace")
    try:
        doc = json.loads(text)
    except ValueError:
        return text[:200]
    if isinstance(doc, dict) and "payload" in doc:
        doc = doc["payload"]
    return json.dumps(doc, separators=(",", ":"))[:200]
