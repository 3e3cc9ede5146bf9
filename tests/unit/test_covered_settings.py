"""read.only and incremental.snapshot.allow.schema.changes: every value is checked and what
gtidmark does with it is said in one INFO line (it has one implementation covering both)."""

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
