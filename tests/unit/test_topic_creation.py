"""topic.creation.* as Kafka Connect reads it (KIP-158): groups in order, full-match regexes,
the default group's values inherited, the broker's defaults (-1) when nothing is set."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.kafka.topic_creation import TopicCreation, TopicSpec
from connector.settings.errors import ConfigError
from connector.settings.parse import parse_config


def test_nothing_set_is_the_brokers_defaults_never_one() -> None:
    assert TopicCreation.parse({}).spec_for("shop.shop.orders") == TopicSpec(-1, -1, {})


def test_the_default_group_sets_counts_and_topic_settings() -> None:
    creation = TopicCreation.parse({
        "topic.creation.default.replication.factor": "3",
        "topic.creation.default.partitions": "6",
        "topic.creation.default.cleanup.policy": "compact",
        "topic.creation.default.compression.type": "lz4",
    })
    assert creation.spec_for("any") == TopicSpec(6, 3, {"cleanup.policy": "compact",
                                                        "compression.type": "lz4"})


def test_first_matching_group_wins_and_inherits_what_it_does_not_set() -> None:
    creation = TopicCreation.parse({
        "topic.creation.groups": "big, logs",
        "topic.creation.default.replication.factor": "3",
        "topic.creation.default.partitions": "1",
        "topic.creation.default.compression.type": "lz4",
        "topic.creation.big.include": r"shop\.shop\.orders.*, shop\.shop\.items",
        "topic.creation.big.exclude": r".*_archive",
        "topic.creation.big.partitions": "12",
        "topic.creation.logs.include": r"shop\..*",
        "topic.creation.logs.cleanup.policy": "delete",
        "topic.creation.logs.replication.factor": "-1",
    })
    assert creation.spec_for("shop.shop.orders") == TopicSpec(12, 3, {"compression.type": "lz4"})
    assert creation.spec_for("shop.shop.items") == TopicSpec(12, 3, {"compression.type": "lz4"})
    # Excluded from the first group, taken by the second.
    assert creation.spec_for("shop.shop.orders_archive") == TopicSpec(
        1, -1, {"compression.type": "lz4", "cleanup.policy": "delete"})
    # A regex matches the whole name, as Java's Matcher.matches() does.
    assert creation.spec_for("xshop.shop.items") == TopicSpec(1, 3, {"compression.type": "lz4"})


@pytest.mark.parametrize(("settings", "named"), [
    ({"topic.creation.big.partitions": "3"}, "topic.creation.big.partitions"),
    ({"topic.creation.groups": "big"}, "topic.creation.big.include"),
    ({"topic.creation.groups": "default"}, "topic.creation.groups"),
    ({"topic.creation.default.include": "x"}, "topic.creation.default.include"),
    ({"topic.creation.default.partitions": "0"}, "topic.creation.default.partitions"),
    ({"topic.creation.default.replication.factor": "-2"},
     "topic.creation.default.replication.factor"),
    ({"topic.creation.default.replication.factor": "three"},
     "topic.creation.default.replication.factor"),
    ({"topic.creation.groups": "g", "topic.creation.g.include": "("}, "topic.creation.g.include"),
])
def test_a_bad_setting_is_one_line_naming_its_key(settings: dict[str, str], named: str) -> None:
    with pytest.raises(ValueError, match=f"^{named.replace('.', '[.]')}: "):
        TopicCreation.parse(settings)


def test_a_connector_file_with_a_bad_group_exits_with_the_key_named() -> None:
    doc = {"name": "c", "config": {"bootstrap.servers": "k:9092", "database.hostname": "h",
                                   "database.user": "u", "database.password": "p",
                                   "database.server.id": "1", "topic.prefix": "shop",
                                   "topic.creation.groups": "big"}}
    with pytest.raises(ConfigError, match="topic.creation.big.include: required"):
        parse_config(doc)
    doc["config"]["topic.creation.big.include"] = "shop[.].*"
    doc["config"]["topic.creation.big.replication.factor"] = "3"
    assert parse_config(doc).topic_creation.spec_for("shop.a.b").replication_factor == 3


@given(st.dictionaries(st.sampled_from(["cleanup.policy", "retention.ms", "compression.type",
                                        "min.insync.replicas"]),
                       st.text("abc123", min_size=1, max_size=5)),
       st.integers(-1, 50).filter(lambda n: n != 0), st.text("abcxyz.", max_size=12))
def test_a_topic_no_group_takes_gets_exactly_the_default_group(
        config: dict[str, str], partitions: int, topic: str) -> None:
    settings = {f"topic.creation.default.{k}": v for k, v in config.items()}
    settings["topic.creation.default.partitions"] = str(partitions)
    settings |= {"topic.creation.groups": "none", "topic.creation.none.include": "(?!)"}
    assert TopicCreation.parse(settings).spec_for(topic) == TopicSpec(partitions, -1, config)
