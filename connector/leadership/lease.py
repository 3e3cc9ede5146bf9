"""Active-passive leadership: a Kafka consumer group over the single-partition signal topic.

Every `gtidmark run` with the same name joins the group `<name>-leader` and subscribes to
the signal topic (one partition, so one member holds it). The holder is the active
instance; the partition is paused at once, so the lease consumer never fetches data. A
cooperative-sticky assignment keeps the holder when standbys join (an eager rebalance
would take the partition away from the active instance on every join; measured).

The group says who may lead; it cannot stop a paused holder (SIGSTOP, a long GC pause, a
starved CPU) from acting on stale belief when it resumes. So leadership also needs
continuity: `confirmed()` is false once either the lease thread or the engine loop has
gone `session/3` without running, and the engine then checks the offsets topic for a
newer writer epoch before it commits again (DBLog's lease, Lindorm's writer fencing).

An instance that stops leading (fenced, or its task FAILED) `release`s the lease: it leaves
the group, so a standby takes over at once, and only a fresh assignment after it joins
again (`acquire`) lets it lead; an assignment of its old membership, still in the
consumer when it steps down, never counts.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, TopicPartition

from connector.settings.errors import ConfigError

log = logging.getLogger("gtidmark.ha")
KAFKA_LOG = logging.getLogger("gtidmark.ha.kafka")

POLL_INTERVAL_S = 0.1


@dataclass(frozen=True)
class Instance:
    """Who an instance is, as written next to its epoch in the offsets."""

    host: str
    pid: int
    since: float  # wall-clock time the instance became active

    def to_json(self) -> dict[str, Any]:
        return {"host": self.host, "pid": self.pid, "since": round(self.since, 3)}

    @classmethod
    def from_json(cls, doc: Any) -> Instance | None:
        if not isinstance(doc, dict):
            return None
        return cls(str(doc.get("host", "?")), int(doc.get("pid", 0)),
                   float(doc.get("since", 0.0)))

    @classmethod
    def here(cls) -> Instance:
        """This process, becoming active now."""
        # Rounded as the offsets value writes it, so that a writer knows its own records.
        return cls(socket.gethostname(), os.getpid(), round(time.time(), 3))


def client_id() -> str:
    """host-pid: shows in the broker's group description (`gtidmark status`)."""
    host = "".join(c if c.isalnum() or c in "._-" else "_" for c in socket.gethostname())
    return f"gtidmark-{host}-{os.getpid()}"


def membership(settings: dict[str, str], session_timeout_ms: int) -> dict[str, Any]:
    """The group settings of the lease consumer for its group protocol.

    Classic (the default): the session and heartbeat from `ha.session.timeout.ms`, and a
    cooperative-sticky assignment. KIP-848's `consumer.group.protocol=consumer`: the broker
    owns the session (`group.consumer.session.timeout.ms`, 45 s by default) and the
    assignment, and librdkafka refuses the classic settings; its server-side assignor also
    leaves the partition with the member that holds it when another joins (measured).
    """
    if str(settings.get("group.protocol", "classic")).lower() == "consumer":
        return {}
    return {"session.timeout.ms": session_timeout_ms,
            "heartbeat.interval.ms": max(100, session_timeout_ms // 6),
            "partition.assignment.strategy": "cooperative-sticky"}


class Lease:
    """Holds (or waits for) the leadership of one connector name."""

    def __init__(self, settings: dict[str, str], group: str, topic: str,
                 session_timeout_ms: int) -> None:
        self.group = group
        self.topic = topic
        self.session_s = session_timeout_ms / 1000.0
        self.grace_s = self.session_s / 3  # continuity needed to act without re-checking
        self._consumer = Consumer({
            **settings, "group.id": group, "client.id": client_id(),
            "enable.auto.commit": False, "enable.auto.offset.store": False,
            **membership(settings, session_timeout_ms), "logger": KAFKA_LOG,
        })
        self._held = threading.Event()
        self._lost = threading.Event()  # set on revoke/lost; cleared by `acquire`
        self._lock = threading.Lock()
        self._wanted = True  # a member of the group: false from `release` to `acquire`
        self._generation = 0  # each `release` starts a new one: older assignments are stale
        self._joined: int | None = None  # the generation subscribed in (lease thread only)
        self.refused: str | None = None  # the broker refused the group's settings
        self._warned: set[int] = set()
        self._last_beat = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gtidmark-lease", daemon=True)

    # -- the lease thread: the only one touching the consumer -------------------------

    def start(self) -> None:
        self._follow_membership()
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._follow_membership()
            msg = self._consumer.poll(POLL_INTERVAL_S)
            self._last_beat = time.monotonic()
            err = None if msg is None else msg.error()
            if err is not None:
                self._on_error(err)
        self._consumer.close()  # leaves the group: a standby takes over without waiting

    def _follow_membership(self) -> None:
        """Leave the group after `release`, join it again (a new member) on `acquire`."""
        with self._lock:
            wanted, generation = self._wanted, self._generation
        if self._joined is not None and (not wanted or self._joined != generation):
            self._consumer.unsubscribe()  # revokes, and leaves the group
            self._joined = None
        if wanted and self._joined is None:
            self._joined = generation

            def on_assign(consumer: Consumer, partitions: list[TopicPartition]) -> None:
                self._on_assign(consumer, partitions, generation)
            self._consumer.subscribe([self.topic], on_assign=on_assign,
                                     on_revoke=self._on_revoke, on_lost=self._on_lost)

    def _on_error(self, err: KafkaError) -> None:
        """A join the broker refuses for its settings ends the wait with one line; other
        errors are retried by the client and logged once each."""
        if err.code() == KafkaError.INVALID_SESSION_TIMEOUT:
            self.refused = (f"ha.session.timeout.ms: {int(self.session_s * 1000)} is outside "
                            "the broker's group.min.session.timeout.ms .. "
                            "group.max.session.timeout.ms (6000 .. 1800000 unless the broker "
                            "sets them)")
        elif err.code() not in self._warned:
            self._warned.add(err.code())
            log.warning("lease group %s: %s", self.group, err.str())

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition],
                   generation: int) -> None:
        """Held when the membership subscribed in the current generation is assigned."""
        consumer.pause(partitions)  # a lease, not a reader: never fetch
        with self._lock:  # so that a `release` meanwhile cannot be undone
            if self._wanted and generation == self._generation and \
                    any(p.topic == self.topic for p in partitions):
                self._held.set()

    def _on_revoke(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        if any(p.topic == self.topic for p in partitions) and self._held.is_set():
            self._held.clear()
            self._lost.set()

    def _on_lost(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._on_revoke(consumer, partitions)

    # -- the engine's side ------------------------------------------------------------

    def acquire(self, stopping: threading.Event) -> bool:
        """Block until this instance holds the lease (True) or `stopping` is set (False);
        after `release`, only through a new assignment of the group. ConfigError if the
        broker refuses the group's settings."""
        with self._lock:
            self._wanted = True
        while not stopping.is_set():
            if self.refused is not None:
                raise ConfigError(self.refused)
            if self._held.wait(0.2):
                self._lost.clear()
                return True
        return False

    def release(self) -> None:
        """Stop leading: leave the group (a standby takes over at once); nothing this
        membership was assigned counts any more."""
        with self._lock:
            self._wanted = False
            self._generation += 1
            self._held.clear()

    def held(self) -> bool:
        """The group still gives us the partition (no revoke or loss seen)."""
        return self._held.is_set() and not self._lost.is_set()

    def confirmed(self, engine_beat: float) -> bool:
        """Held, and neither the lease thread nor the engine loop paused for `grace_s`."""
        now = time.monotonic()
        return self.held() and now - self._last_beat < self.grace_s and \
            now - engine_beat < self.grace_s

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(self.session_s + 5)

