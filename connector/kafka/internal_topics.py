"""The offsets and schema-history topics: created as Kafka Connect and Debezium create them,
and refused at start, in one line, when they exist with settings that lose data.

The offsets topic is compacted (Connect's `offset.storage.*` worker settings): with a delete
policy the position is gone after the topic's retention. The schema-history topic has one
partition, a delete policy and no retention limit (Debezium's `KafkaSchemaHistory`): with
several partitions the order of DDL is lost, and with a retention or compaction the
history of older tables expires.
"""

from __future__ import annotations

from connector.kafka.topic_creation import BROKER_DEFAULT, TopicSpec
from connector.kafka.topics import TopicAdmin
from connector.settings.errors import ConfigError
from connector.settings.model import ConnectorConfig

LONG_MAX = str(2**63 - 1)  # Debezium's retention.ms of the history topic (Long.MAX_VALUE)


def offsets_spec(config: ConnectorConfig) -> TopicSpec:
    return TopicSpec(config.offset_storage_partitions, config.offset_storage_replication_factor,
                     {"cleanup.policy": "compact"})


def history_spec() -> TopicSpec:
    return TopicSpec(1, BROKER_DEFAULT, {"cleanup.policy": "delete", "retention.ms": LONG_MAX,
                                         "retention.bytes": "-1"})


def check_offsets_topic(admin: TopicAdmin, topic: str) -> int:
    """The offsets topic's partition count; ConfigError if it is not compacted."""
    policy = admin.topic_configs(topic).get("cleanup.policy", "delete")
    if "compact" not in policy.split(","):
        raise ConfigError(f"offset.storage.topic {topic} has cleanup.policy={policy}: it needs "
                          "cleanup.policy=compact or the position is lost after the topic's "
                          "retention")
    partitions = admin.partitions_of(topic)
    if not partitions:
        raise RuntimeError(f"offsets topic {topic} has no partitions in the metadata")
    return partitions


def check_history_topic(admin: TopicAdmin, topic: str) -> None:
    """ConfigError if the schema-history topic would lose or reorder DDL."""
    key = "schema.history.internal.kafka.topic"
    partitions = admin.partitions_of(topic)
    if partitions is not None and partitions != 1:
        raise ConfigError(f"{key}: {topic} has {partitions} partitions; the schema history "
                          "must have exactly one, or the order of its DDL is lost")
    configs = admin.topic_configs(topic)
    policy = configs.get("cleanup.policy", "delete")
    if policy != "delete":
        raise ConfigError(f"{key}: {topic} has cleanup.policy={policy}; the schema history "
                          "needs cleanup.policy=delete with no retention limit")
    for setting in ("retention.ms", "retention.bytes"):
        value = configs.get(setting, "-1")
        if value != "-1" and value != LONG_MAX:
            raise ConfigError(f"{key}: {topic} has {setting}={value}; the schema history "
                              f"needs {setting}=-1 (unlimited), or the DDL of older tables "
                              "expires")
