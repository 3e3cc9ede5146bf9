"""TopicAdmin against a cluster whose brokers learn of a new topic one after another: a
request right after creation may reach a broker that still answers UNKNOWN_TOPIC_OR_PART
(CI failed once so on the three-broker cluster: the history topic's settings read)."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from connector.kafka.topics import TopicAdmin


class LaggingCluster:
    """An AdminClient stand-in: the topic is created and visible with a leader, then the
    first `behind` DescribeConfigs and metadata requests reach a broker that lacks it."""

    def __init__(self, behind: int) -> None:
        self.behind = behind
        self.created: set[str] = set()
        self.describes = 0

    def _unknown(self) -> bool:
        if self.behind > 0:
            self.behind -= 1
            return True
        return False

    def list_topics(self, topic: str | None = None, timeout: float = 0) -> Any:
        names = [topic] if topic else sorted(self.created)
        topics = {t: SimpleNamespace(error=None, partitions={0: SimpleNamespace(leader=1)})
                  for t in names if t in self.created}
        return SimpleNamespace(topics=topics)

    def poll(self, timeout: float) -> int:
        return 0

    def create_topics(self, new: list[Any], request_timeout: float) -> dict[str, Future[None]]:
        out: dict[str, Future[None]] = {}
        for t in new:
            self.created.add(t.topic)
            out[t.topic] = Future()
            out[t.topic].set_result(None)
        return out

    def describe_configs(self, resources: list[Any]) -> dict[Any, Future[dict[str, Any]]]:
        self.describes += 1
        future: Future[dict[str, Any]] = Future()
        if self._unknown():
            future.set_exception(KafkaException(KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART)))
        else:
            future.set_result({"cleanup.policy": SimpleNamespace(value="delete")})
        return {resources[0]: future}


def admin_over(cluster: LaggingCluster) -> TopicAdmin:
    admin = TopicAdmin({"bootstrap.servers": "localhost:1"})
    admin._admin = cluster  # type: ignore[assignment]
    return admin


def test_settings_of_a_topic_just_created_are_read_from_a_broker_that_knows_it() -> None:
    cluster = LaggingCluster(behind=3)
    admin = admin_over(cluster)
    admin.ensure(["h"])
    assert admin.topic_configs("h") == {"cleanup.policy": "delete"}
    assert cluster.describes == 4


def test_the_partition_count_of_a_topic_just_created_is_the_one_seen_at_creation() -> None:
    cluster = LaggingCluster(behind=0)
    admin = admin_over(cluster)
    admin.ensure(["h"])
    cluster.created.clear()  # every broker asked now would say it does not know the topic
    assert admin.partitions_of("h") == 1


def test_an_unknown_topic_not_created_here_is_not_waited_for() -> None:
    cluster = LaggingCluster(behind=100)
    admin = admin_over(cluster)
    with pytest.raises(KafkaException):
        admin.topic_configs("other")
    assert cluster.describes == 1
