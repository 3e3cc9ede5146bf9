"""Which table columns the source renamed or dropped, from schema-change records."""

from __future__ import annotations

import json

from spark_consumer.column_ddl import (
    ColumnChange,
    ColumnEvent,
    column_events,
    follow_schema_change,
    pending,
)
from spark_consumer.dbztypes import ColumnSpec
from spark_consumer.tables import TableRef, TableState


def record(ddl: str) -> bytes:
    """A schema-change record as the connector writes it (JSON with schemas; no columns)."""
    payload = {"databaseName": "shop", "ddl": ddl, "tableChanges": [
        {"type": "ALTER", "id": '"shop"."orders"', "table": None}]}
    return json.dumps({"schema": {"type": "struct"}, "payload": payload}).encode()


def state(*columns: str) -> TableState:
    return TableState(TableRef("gtidmark", "shop", "orders"),
                      [ColumnSpec(c, "string") for c in columns], ["id"])


def test_column_events_read_renames_drops_and_adds_but_not_indexes_or_retyping() -> None:
    ddl = ("ALTER TABLE orders RENAME COLUMN `a``x` TO b, CHANGE COLUMN c d INT, "
           "change e e BIGINT, DROP COLUMN f, DROP INDEX i, DROP PRIMARY KEY, ADD g INT, "
           "ADD UNIQUE KEY u (g), ALTER COLUMN h DROP DEFAULT")
    assert column_events(ddl) == [ColumnEvent("rename", "a`x", "b"),
                                  ColumnEvent("rename", "c", "d"), ColumnEvent("drop", "f"),
                                  ColumnEvent("add", "g")]


def test_renames_follow_to_the_last_name_and_a_drop_then_add_is_no_change() -> None:
    tables: dict[tuple[str, str], list[ColumnEvent]] = {}
    for ddl in ("ALTER TABLE orders RENAME COLUMN a TO b", "ALTER TABLE orders CHANGE b c INT",
                "ALTER TABLE orders DROP COLUMN z", "ALTER TABLE orders DROP y",
                "ALTER TABLE orders ADD COLUMN y INT"):
        follow_schema_change(tables, record(ddl))
    assert pending(state("id", "a", "y", "z"), tables[("shop", "orders")]) == [
        ColumnChange("a", "c"), ColumnChange("z", None)]


def test_a_rename_whose_target_the_table_already_has_is_a_drop_and_key_columns_stay() -> None:
    events = [ColumnEvent("rename", "a", "b"), ColumnEvent("drop", "id")]
    assert pending(state("id", "a", "b"), events) == [ColumnChange("a", None)]
    assert pending(state("id", "a"), None) == []
