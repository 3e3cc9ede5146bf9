"""Creating the connector's topics as Kafka Connect does, and reading their settings.

No broker auto-creation is assumed: every topic is created here with the partitions,
replication factor and settings `topic_creation` gives it, then waited for until the
metadata shows it with a leader for each partition (a CreateTopics answer comes before the
brokers' metadata caches have it). On a cluster each broker's cache catches up on its own,
so a request right after may reach one that still answers UNKNOWN_TOPIC_OR_PART: the
partition count seen at creation is kept, and reading a new topic's settings retries that.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from connector.kafka.topic_creation import TopicCreation, TopicSpec

log = logging.getLogger(__name__)


def create_topics(admin: AdminClient, specs: dict[str, TopicSpec],
                  timeout: float) -> dict[str, int]:
    """Create `specs`' topics (one that exists already is fine), wait until they are visible
    with a leader for every partition and return each one's partition count; KafkaException
    if the broker refuses."""
    deadline = time.monotonic() + timeout
    futures = admin.create_topics(
        [NewTopic(t, s.partitions, s.replication_factor, config=dict(s.config))
         for t, s in specs.items()], request_timeout=max(1.0, timeout))
    for topic, future in futures.items():
        try:
            future.result(max(1.0, deadline - time.monotonic()))
            spec = specs[topic]
            log.info("created topic %s (partitions %s, replication factor %s%s)", topic,
                     _shown(spec.partitions), _shown(spec.replication_factor),
                     "".join(f", {k}={v}" for k, v in sorted(spec.config.items())))
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise
    counts: dict[str, int] = {}
    for topic in specs:
        while not (count := _visible(admin, topic, max(0.1, deadline - time.monotonic()))):
            if time.monotonic() > deadline:
                raise KafkaException(KafkaError(KafkaError._TIMED_OUT,
                                                f"topic {topic} created but not in the "
                                                f"metadata after {timeout:.0f}s"))
            time.sleep(0.05)
        counts[topic] = count
    return counts


def _shown(count: int) -> str:
    return "the broker's default" if count < 0 else str(count)


def _visible(admin: AdminClient, topic: str, timeout: float) -> int:
    """The topic's partition count once one broker shows a leader for each, else 0."""
    meta = admin.list_topics(topic=topic, timeout=timeout).topics.get(topic)
    admin.poll(0)  # its log lines (an admin client's wait only for a poll)
    if (meta is not None and meta.error is None and meta.partitions
            and all(p.leader >= 0 for p in meta.partitions.values())):
        return len(meta.partitions)
    return 0


class TopicAdmin:
    """Creates topics once, each as `creation` says unless the caller gives its spec, and
    remembers them; reads the settings of topics that exist."""

    def __init__(self, settings: dict[str, str], creation: TopicCreation | None = None) -> None:
        conf: dict[str, Any] = {**settings, "allow.auto.create.topics": False}
        self._admin = AdminClient(conf)
        self._known: set[str] = set()
        self._created: dict[str, int] = {}
        self._creation = creation or TopicCreation()

    def partitions_of(self, topic: str, timeout: float = 10.0) -> int | None:
        """The topic's partition count (as seen at creation for one created here)."""
        if topic in self._created:
            return self._created[topic]
        meta = self._admin.list_topics(topic=topic, timeout=timeout).topics.get(topic)
        self._admin.poll(0)
        if meta is None or meta.error is not None:
            return None
        return len(meta.partitions)

    def topic_configs(self, topic: str, timeout: float = 10.0) -> dict[str, str]:
        """A topic's settings as the broker reports them (defaults included); a topic
        created here is asked again while a broker behind the controller does not know it."""
        resource = ConfigResource(ResourceType.TOPIC, topic)
        deadline = time.monotonic() + timeout
        while True:
            try:
                entries = self._admin.describe_configs([resource])[resource].result(
                    max(0.5, deadline - time.monotonic()))
                break
            except KafkaException as exc:
                unknown = exc.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART
                if not (unknown and topic in self._created) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        return {name: str(entry.value) for name, entry in entries.items()
                if entry.value is not None}

    def ensure(self, topics: Iterable[str], spec: TopicSpec | None = None,
               timeout: float = 30.0) -> None:
        wanted = [t for t in topics if t not in self._known]
        if not wanted:
            return
        existing = set(self._admin.list_topics(timeout=timeout).topics)
        self._admin.poll(0)
        missing = [t for t in wanted if t not in existing]
        if missing:
            self._created.update(create_topics(
                self._admin, {t: spec or self._creation.spec_for(t) for t in missing}, timeout))
        self._known.update(wanted)
