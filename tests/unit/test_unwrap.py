"""ExtractNewRecordState (transforms=unwrap) on the records leaving the dispatcher."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import fastavro
import pytest

from connector.events import EventEncoder
from connector.events.converters import AVRO_CONVERTER, CodecFactory
from connector.events.unwrap import Headers, Unwrap, UnwrapSink, with_transforms
from connector.schema import Column, TableSchema
from connector.settings.errors import ConfigError
from connector.settings.model import ConnectorConfig
from connector.settings.smt import EXTRACT_NEW_RECORD_STATE
from tests.unit.test_config import doc as connector_file
from tests.unit.test_config import run_cli
from tests.unit.test_envelope import SOURCE, config

TABLE = TableSchema("shop", "items", (
    Column("id", "int", nullable=False),
    Column("e", "enum", values=("a", "b", "c"), default="'b'"),
    Column("v", "varchar", length=10, charset="utf8mb4"),
), ("id",))
ROW = {"id": 1, "e": None, "v": "x"}
Sent = tuple[str, bytes | None, bytes | None, Headers | None]


class Collect:
    def __init__(self) -> None:
        self.sent: list[Sent] = []

    def send(self, topic: str, key: bytes | None, value: bytes | None,
             headers: Headers | None = None) -> None:
        self.sent.append((topic, key, value, headers))


def unwrap_config(converter: dict[str, str] | None = None, **options: str) -> ConnectorConfig:
    extra = {f"transforms.unwrap.{k.replace('_', '.')}": v for k, v in options.items()}
    return config(**{"transforms": "unwrap",
                     "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
                     **extra, **(converter or {})})


def run(cfg: ConnectorConfig, *records: tuple[str, Any, Any] | None) -> list[Sent]:
    """Each record: (op, before, after) as the dispatcher sends it, None for a tombstone."""
    encoder, out = EventEncoder(cfg), Collect()
    sink = with_transforms(cfg.unwrap, out, encoder)
    table = encoder.table(TABLE)
    for record in records:
        key = table.key(ROW)
        if record is None:
            sink.send(table.topic, key, None)
        else:
            op, before, after = record
            sink.send(table.topic, key, table.value(op, before, after, SOURCE, 5))
    return out.sent


def doc(sent: Sent) -> Any:
    return None if sent[2] is None else json.loads(sent[2])


def test_default_mode_writes_the_row_and_a_delete_as_a_null_payload() -> None:
    """tombstone (Debezium's default): c/u/r -> the row; d -> the row schema with a null
    payload (JsonConverter's bytes for a null value of a non-null schema); tombstones drop."""
    sent = run(unwrap_config(), ("c", None, ROW), ("d", ROW, None), None)
    assert len(sent) == 2
    created = doc(sent[0])
    assert created["payload"] == {"id": 1, "e": "b", "v": "x"}
    assert created["schema"]["name"] == "app.shop.items.Value"
    assert created["schema"]["optional"] is True
    assert doc(sent[1]) == {"schema": created["schema"], "payload": None}


def test_other_topics_pass_unchanged() -> None:
    cfg = unwrap_config()
    encoder, out = EventEncoder(cfg), Collect()
    sink = with_transforms(cfg.unwrap, out, encoder)
    topic, key, value = encoder.heartbeat(7)
    sink.send(topic, key, value)
    assert out.sent == [(topic, key, value, None)]


def test_rewrite_adds_deleted_fields_and_headers() -> None:
    cfg = unwrap_config(delete_tombstone_handling_mode="rewrite",
                        add_fields="op,table,source.ts_ms,id:txid,source.snapshot",
                        add_headers="op,db", add_headers_prefix="h_")
    sent = run(cfg, ("c", None, ROW), ("d", ROW, None), None)
    assert len(sent) == 2
    created, deleted = doc(sent[0]), doc(sent[1])
    assert created["payload"] == {"id": 1, "e": "b", "v": "x", "__deleted": "false",
                                  "__op": "c", "__table": "orders",
                                  "__source_ts_ms": 1_700_000_000_000, "__txid": None,
                                  "__source_snapshot": None}  # unset while streaming
    assert deleted["payload"]["__deleted"] == "true" and deleted["payload"]["__op"] == "d"
    fields = {f["field"]: f for f in created["schema"]["fields"]}
    assert created["schema"]["optional"] is False
    assert fields["__deleted"] == {"type": "string", "optional": True, "field": "__deleted"}
    assert fields["__source_ts_ms"] == {"type": "int64", "optional": True,
                                        "field": "__source_ts_ms"}
    assert sent[0][3] == [("h_op", b"c"), ("h_db", b"shop")]
    assert sent[1][3] == [("h_op", b"d"), ("h_db", b"shop")]


def test_rewrite_with_tombstone_keeps_the_tombstone_with_an_op_header() -> None:
    cfg = unwrap_config(delete_tombstone_handling_mode="rewrite-with-tombstone",
                        add_headers="op,source.db")
    sent = run(cfg, ("d", ROW, None), None)
    assert [s[2] is None for s in sent] == [False, True]
    assert sent[0][3] == [("__op", b"d"), ("__source_db", b"shop")]
    assert sent[1][3] == [("__op", b"d"), ("__source_db", b"shop"), ("__op", b"d")]


@pytest.mark.parametrize(("mode", "expected"), [("drop", []), ("delete-to-tombstone", [None])])
def test_drop_and_delete_to_tombstone(mode: str, expected: list[Any]) -> None:
    sent = run(unwrap_config(delete_tombstone_handling_mode=mode), ("d", ROW, None), None)
    assert [s[2] for s in sent] == expected


def test_rewrite_fills_defaults_even_when_the_converter_keeps_nulls() -> None:
    """The SMT's own replace.null.with.default [true]: InsertField's copy reads nulls with
    Struct.get; without a rewrite the converter's setting alone decides."""
    keep = {"value.converter.replace.null.with.default": "false"}

    def e(cfg: ConnectorConfig) -> Any:
        return doc(run(cfg, ("c", None, ROW))[0])["payload"]["e"]
    assert e(unwrap_config(keep, delete_tombstone_handling_mode="rewrite")) == "b"
    assert e(unwrap_config(keep, delete_tombstone_handling_mode="rewrite",
                           replace_null_with_default="false")) is None
    assert e(unwrap_config(keep)) is None
    assert e(unwrap_config()) == "b"


def test_avro_records_are_unwrapped_under_their_own_schema() -> None:
    registered: dict[str, str] = {}

    def lookup(subject: str, schema_json: str) -> int:
        registered[subject] = schema_json
        return len(registered)

    cfg = unwrap_config({"key.converter": AVRO_CONVERTER, "value.converter": AVRO_CONVERTER},
                        add_fields="op")
    assert cfg.unwrap is not None
    encoder, out = EventEncoder(cfg, schema_ids=lookup), Collect()
    sink = UnwrapSink(out, Unwrap(cfg.unwrap), encoder, CodecFactory(cfg, lookup))
    table = encoder.table(TABLE)
    sink.send(table.topic, table.key(ROW), table.value("c", None, ROW, SOURCE, 5))
    value = out.sent[0][2]
    assert value is not None
    schema = fastavro.parse_schema(json.loads(registered["app.shop.items-value"]))
    assert schema["name"].endswith("Value")
    assert fastavro.schemaless_reader(io.BytesIO(value[5:]), schema, None) == {
        "id": 1, "e": "b", "v": "x", "__op": "c"}


@pytest.mark.parametrize(("option", "value", "message"), [
    ("route.by.field", "v", "option 'route.by.field'"),
    ("delete.tombstone.handling.mode", "none", "is not one of drop, tombstone"),
    ("replace.null.with.default", "yes", "expected true or false"),
])
def test_unsupported_or_bad_options_are_refused(option: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        unwrap_config(**{option.replace(".", "_"): value})


def test_options_debezium_3_no_longer_reads_warn(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        cfg = unwrap_config(drop_tombstones="false")
    assert cfg.unwrap is not None and cfg.unwrap.mode == "tombstone"
    assert "transforms.unwrap.drop.tombstones is not read by Debezium 3" in caplog.text


@pytest.mark.parametrize(("option", "value"), [("route.by.field", "v"),
                                               ("delete.tombstone.handling.mode", "none")])
def test_gtidmark_run_exits_2_naming_the_option(tmp_path: Path, option: str,
                                                value: str) -> None:
    path = tmp_path / "connector.json"
    path.write_text(json.dumps(connector_file(**{
        "transforms": "flat", "transforms.flat.type": EXTRACT_NEW_RECORD_STATE,
        f"transforms.flat.{option}": value})))
    result = run_cli("run", "--config", str(path))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"transforms.flat.{option}" in lines[0], result.stderr
