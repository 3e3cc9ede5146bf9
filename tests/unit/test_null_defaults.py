"""A NULL in a column with a DEFAULT, as the converters write it (replace.null.with.default)."""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro
import pytest

from connector.events import EventEncoder
from connector.events.converters import AVRO_CONVERTER
from connector.schema import Column, TableSchema
from tests.unit.test_envelope import SOURCE, config

TABLE = TableSchema("shop", "enums", (
    Column("id", "int", nullable=False),
    Column("e", "enum", values=("a", "b", "c"), default="'b'"),
    Column("vc", "varchar", length=40, charset="utf8mb4", default="'abc'"),
    Column("plain", "int"),
), ("id",))
NULLS = {"id": 1, "e": None, "vc": None, "plain": None}


def _after(raw: bytes | None) -> Any:
    assert raw is not None
    return json.loads(raw)["payload"]["after"]


def test_json_writes_the_default_for_null_by_default() -> None:
    """JsonConverter's replace.null.with.default is true unless set: Debezium's records
    carry 'b' / 'abc' for NULLs written into columns with those DEFAULTs."""
    enc = EventEncoder(config()).table(TABLE)
    assert _after(enc.value("c", None, NULLS, SOURCE, 1)) == {
        "id": 1, "e": "b", "vc": "abc", "plain": None}
    before = json.loads(enc.value("d", NULLS, None, SOURCE, 1))["payload"]["before"]
    assert before["e"] == "b"


@pytest.mark.parametrize("schemas", ["true", "false"])
def test_json_writes_null_when_replace_null_with_default_is_false(schemas: str) -> None:
    enc = EventEncoder(config(**{"value.converter.replace.null.with.default": "false",
                                 "value.converter.schemas.enable": schemas})).table(TABLE)
    raw = enc.value("c", None, NULLS, SOURCE, 1)
    doc = json.loads(raw)
    after = doc["payload"]["after"] if schemas == "true" else doc["after"]
    assert after == {"id": 1, "e": None, "vc": None, "plain": None}


def test_snapshot_rows_encoded_ahead_follow_the_setting() -> None:
    for setting, expected in (("true", "b"), ("false", None)):
        enc = EventEncoder(config(**{"value.converter.replace.null.with.default": setting})
                           ).table(TABLE)
        _, after = enc.read_row(NULLS)
        assert json.loads(after)["e"] == expected


@pytest.mark.parametrize(("ignore", "expected"), [("false", "b"), ("true", None)])
def test_avro_writes_the_default_unless_ignore_default_for_nullables(
        ignore: str, expected: str | None) -> None:
    """Confluent's AvroData reads struct fields with Struct.get (the default for a null)."""
    registered: dict[str, str] = {}

    def lookup(subject: str, schema_json: str) -> int:
        registered[subject] = schema_json
        return 1

    cfg = config(**{"key.converter": AVRO_CONVERTER, "value.converter": AVRO_CONVERTER,
                    "value.converter.ignore.default.for.nullables": ignore})
    raw = EventEncoder(cfg, schema_ids=lookup).table(TABLE).value("c", None, NULLS, SOURCE, 1)
    schema = fastavro.parse_schema(json.loads(registered["app.shop.enums-value"]))
    record = fastavro.schemaless_reader(io.BytesIO(raw[5:]), schema, None)
    assert isinstance(record, dict)
    assert record["after"]["e"] == expected and record["after"]["plain"] is None


def test_streamed_source_snapshot_is_null_when_nulls_are_kept() -> None:
    """Debezium leaves `source.snapshot` null while streaming; JsonConverter writes the
    field's default "false" unless replace.null.with.default is false (then null, as the
    unwrap conformance run shows for its schema changes). Snapshot values are set."""
    from dataclasses import replace
    for setting, expected in (("true", "false"), ("false", None)):
        enc = EventEncoder(config(**{"value.converter.replace.null.with.default": setting}))
        table = enc.table(TABLE)
        source = json.loads(table.value("c", None, NULLS, SOURCE, 1))["payload"]["source"]
        assert source["snapshot"] == expected
        read = replace(SOURCE, snapshot="incremental")
        assert json.loads(table.value("r", None, NULLS, read, 1))["payload"]["source"][
            "snapshot"] == "incremental"
        change = json.loads(enc.schema_change(SOURCE, "DROP TABLE t", "shop", [])[2] or b"")
        assert change["payload"]["source"]["snapshot"] == expected
