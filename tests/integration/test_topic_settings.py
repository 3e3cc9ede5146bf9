"""Topics on Apache Kafka as Kafka Connect and Debezium create them, read back from the broker;
an existing history topic that would lose or reorder DDL, and a lease session the broker's
group settings refuse, each refused at start in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from tests.connector_tools import ConnectorProcess, SourcePair, connector_document
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic
from tests.services import MariaDbPair

LONG_MAX = str(2**63 - 1)


def described(bootstrap: str, topic: str) -> tuple[int, int, dict[str, str]]:
    """(partitions, replication factor, the settings set on the topic itself)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    meta = admin.list_topics(topic=topic, timeout=10).topics[topic]
    replicas = {len(p.replicas) for p in meta.partitions.values()}
    assert len(replicas) == 1
    resource = ConfigResource(ResourceType.TOPIC, topic)
    entries = admin.describe_configs([resource])[resource].result(10)
    own = {k: str(e.value) for k, e in entries.items()
           if e.source == 1}  # DYNAMIC_TOPIC_CONFIG: set at creation
    return len(meta.partitions), replicas.pop(), own


def test_topics_get_the_groups_settings_and_the_internal_topics_connects(
        source: SourcePair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    source.primary.execute(f"CREATE DATABASE {db}")
    source.primary.execute(f"CREATE TABLE {db}.big (id INT PRIMARY KEY)")
    source.primary.execute(f"CREATE TABLE {db}.small (id INT PRIMARY KEY)")
    doc = connector_document(source, broker, db, **{
        "topic.creation.groups": "large",
        "topic.creation.default.partitions": "2",
        "topic.creation.default.compression.type": "zstd",
        "topic.creation.large.include": rf"{db}\.{db}\.big",
        "topic.creation.large.partitions": "4",
        "topic.creation.large.cleanup.policy": "compact,delete",
        "offset.storage.partitions": "7",
    })
    conn = ConnectorProcess(doc, tmp_path)
    conn.start()
    try:
        conn.wait_log("binlog stream open")
        source.primary.execute(f"INSERT INTO {db}.big VALUES (1)")
        source.primary.execute(f"INSERT INTO {db}.small VALUES (1)")
        conn.wait_log(f"created topic {db}.{db}.small")
        conn.wait_log(f"created topic {db}.{db}.big")
    finally:
        assert conn.stop() == 0
    bootstrap = broker.bootstrap
    # -1 everywhere unset: the single test broker's default.replication.factor, 1.
    assert described(bootstrap, f"{db}.{db}.big") == (
        4, 1, {"compression.type": "zstd", "cleanup.policy": "compact,delete"})
    assert described(bootstrap, f"{db}.{db}.small") == (2, 1, {"compression.type": "zstd"})
    assert described(bootstrap, db) == (2, 1, {"compression.type": "zstd"})  # schema changes
    assert described(bootstrap, f"{db}-offsets") == (7, 1, {"cleanup.policy": "compact"})
    assert described(bootstrap, f"{db}-schema-history") == (
        1, 1, {"cleanup.policy": "delete", "retention.ms": LONG_MAX, "retention.bytes": "-1"})
    assert described(bootstrap, f"{db}-signal")[:2] == (1, 1)


@pytest.mark.parametrize(("partitions", "config", "reason"), [
    (3, {}, "has 3 partitions; the schema history must have exactly one"),
    (1, {"retention.ms": "604800000"}, "has retention.ms=604800000"),
    (1, {"cleanup.policy": "compact"}, "has cleanup.policy=compact"),
])
def test_an_existing_history_topic_that_loses_ddl_exits_2_in_one_line(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        partitions: int, config: dict[str, str], reason: str) -> None:
    create_topic(broker.bootstrap, f"{unique_name}-schema-history", partitions, config)
    conn = ConnectorProcess(connector_document(mariadb, broker, unique_name), tmp_path)
    conn.start()
    assert conn.proc is not None
    assert conn.proc.wait(60) == 2
    errors = [line for line in conn.log().splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert f"schema.history.internal.kafka.topic: {unique_name}-schema-history {reason}" \
        in errors[0]


def test_a_lease_session_the_broker_refuses_exits_2_naming_the_setting(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """Apache Kafka refuses a group session under group.min.session.timeout.ms (6 s) at
    JoinGroup; an instance waited as a standby forever before."""
    doc = connector_document(mariadb, broker, unique_name, **{"ha.session.timeout.ms": "3000"})
    conn = ConnectorProcess(doc, tmp_path)
    conn.start()
    assert conn.proc is not None
    assert conn.proc.wait(60) == 2
    errors = [line for line in conn.log().splitlines() if line.startswith("error:")]
    assert errors == [("error: ha.session.timeout.ms: 3000 is outside the broker's "
                       "group.min.session.timeout.ms .. group.max.session.timeout.ms (6000 .. "
                       "1800000 unless the broker sets them)")]
