"""Which table columns the source renamed or dropped, from schema-change records."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from spark_consumer.applying import column_ddl
from spark_consumer.applying.column_ddl import (
    ColumnChange,
    ColumnDdl,
    ColumnEvent,
    column_events,
    follow_schema_change,
    pending,
)
from spark_consumer.decoding.dbztypes import ColumnSpec
from spark_consumer.iceberg.tables import TableRef, TableState


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


def test_a_drop_or_rename_spelled_in_another_case_is_followed() -> None:
    tables: dict[tuple[str, str], list[ColumnEvent]] = {}
    follow_schema_change(tables, record("ALTER TABLE orders DROP COLUMN A, "
                                        "RENAME COLUMN B TO c"))
    # MySQL's column names ignore case: before, `A` and `B` named no column of the table.
    assert pending(state("id", "a", "b"), tables[("shop", "orders")]) == [
        ColumnChange("a", None), ColumnChange("b", "c")]


def test_a_schema_change_record_that_is_not_json_is_skipped() -> None:
    tables: dict[tuple[str, str], list[ColumnEvent]] = {}
    follow_schema_change(tables, b"\x00\x00\x00\x00\x01avro")  # raised ValueError before
    follow_schema_change(tables, record("ALTER TABLE orders DROP COLUMN a"))
    assert tables == {("shop", "orders"): [ColumnEvent("drop", "a")]}


def test_the_schema_change_topic_is_first_read_from_its_low_watermark(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Retention deletes a schema-change topic's oldest records; reading from offset 0
    then failed every start (the reader's auto.offset.reset is error)."""
    reads: list[tuple[int, int]] = []

    def read_range(_kafka: dict[str, str], rng: Any) -> Iterator[tuple[Any, ...]]:
        reads.append((rng.start, rng.end))
        return iter([])

    monkeypatch.setattr(column_ddl, "resolve_topics", lambda *_a: ["shop"])
    monkeypatch.setattr(column_ddl, "low_watermarks", lambda _k, tps: {tps[0]: 40})
    monkeypatch.setattr(column_ddl, "true_ends", lambda _k, tps: {tps[0]: 50})
    monkeypatch.setattr(column_ddl, "read_range", read_range)
    ddl = ColumnDdl(spark=None, kafka={})  # type: ignore[arg-type]
    ddl.refresh(["shop.shop.orders"])
    ddl.refresh(["shop.shop.orders"])
    assert reads == [(40, 50), (50, 50)]


def test_a_change_record_that_is_not_json_is_passed_over_for_the_decoder(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Left to the decoder, which dead-letters it; it stopped the job here before."""
    after = json.dumps({"before": None, "after": {"id": 1, "v": 2}, "op": "c"}).encode()
    monkeypatch.setattr(column_ddl, "read_range", lambda _k, _r: iter(
        [("t", 0, 0, None, b"not json"), ("t", 0, 1, None, after)]))
    rng = column_ddl.OffsetRange("p.shop.orders", 0, 0, 2)
    assert column_ddl.first_columns({}, rng) == ["id", "v"]
    assert column_ddl.first_without({}, rng, "w") == 1
