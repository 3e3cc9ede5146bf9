"""read.only and incremental.snapshot.allow.schema.changes (one implementation covers both
values), and the keys of every Debezium JSON with no mechanism to set here: every value is
checked and what gtidmark does with it is said in one INFO line."""

from __future__ import annotations

import logging

import pytest

from connector.settings.errors import ConfigError
from tests.unit.test_config import cfg

SCHEMA_CHANGES = "incremental.snapshot.allow.schema.changes"


@pytest.mark.parametrize(("key", "value", "lines"), [
    ("read.only", "true", []),
    ("read.only", True, []),
    ("read.only", "FALSE", [
        ("config: read.only=false (Debezium's default: snapshot watermarks written to the "
        "signal table) runs as true: gtidmark never writes to the database, its watermarks "
        "are the replica's GTID positions; the records are the same")]),
    (SCHEMA_CHANGES, "false", [
        (f"config: {SCHEMA_CHANGES}=false is not needed: gtidmark always reads a table again "
        "with its new columns when a schema change comes during its snapshot, so no chunk is "
        "written with the old ones")]),
    (SCHEMA_CHANGES, "true", [
        (f"config: {SCHEMA_CHANGES}=true is what gtidmark always does: a table whose schema "
        "changes during its snapshot is read again with its new columns")]),
])
def test_each_value_is_accepted_with_what_it_does_here(
        key: str, value: object, lines: list[str], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="connector.settings"):
        cfg(**{key.replace(".", "__"): value})
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", line) for line in lines]


@pytest.mark.parametrize("key", ["read.only", SCHEMA_CHANGES])
def test_a_value_that_is_not_a_boolean_is_one_line(key: str) -> None:
    with pytest.raises(ConfigError) as err:
        cfg(**{key.replace(".", "__"): "perhaps"})
    assert str(err.value) == f"config: {key}: a boolean, true or false (got 'perhaps')"


HISTORY = "io.debezium.storage.kafka.history.KafkaSchemaHistory"


def test_a_debezium_connector_json_starts_without_a_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    """The keys every Debezium MySQL connector JSON has, none of them unknown here."""
    with caplog.at_level(logging.INFO, logger="connector.settings"):
        cfg(schema__history__internal=HISTORY, snapshot__locking__mode="minimal",
            max__batch__size="2048", poll__interval__ms=500)
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", (f"config: schema.history.internal={HISTORY} is what gtidmark does: the "
                  "schema history is the Kafka topic schema.history.internal.kafka.topic")),
        ("INFO", ("config: snapshot.locking.mode=minimal has nothing to lock here: gtidmark "
                  "takes no lock, its snapshots are chunks between GTID watermarks on the "
                  "replica")),
        ("INFO", ("config: max.batch.size=2048 has no poll batch to size here: each "
                  "transaction goes to the Kafka producer as it is read (Kafka batches: "
                  "producer.batch.size, producer.linger.ms)")),
        ("INFO", ("config: poll.interval.ms=500 has no poll to wait for here: the engine "
                  "takes a change as soon as the binlog reader hands it over"))]


def test_another_schema_history_class_is_one_line() -> None:
    other = "io.debezium.storage.file.history.FileSchemaHistory"
    with pytest.raises(ConfigError) as err:
        cfg(schema__history__internal=other)
    assert str(err.value) == (
        f"config: schema.history.internal: gtidmark keeps the schema history in a Kafka topic "
        f"({HISTORY}, schema.history.internal.kafka.topic); this class would keep it "
        f"elsewhere, where it would not be found: use {HISTORY} or leave the key out "
        f"(got {other!r})")


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("snapshot.locking.mode", "shared", ("one of minimal, minimal_percona, "
                                         "minimal_percona_no_table_locks, extended, none, "
                                         "custom")),
    ("max.batch.size", "0", "a positive integer"),
    ("poll.interval.ms", "soon", "a positive integer"),
])
def test_a_value_debezium_refuses_is_one_line(key: str, value: str, expected: str) -> None:
    with pytest.raises(ConfigError) as err:
        cfg(**{key.replace(".", "__"): value})
    assert str(err.value) == f"config: {key}: {expected} (got {value!r})"
