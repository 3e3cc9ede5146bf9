"""Avro checked against Confluent's own code, not against our encoder.

Every MariaDB type, read from the replica's binlog (streaming) and by SELECT (snapshot), is
encoded by the connector twice: JsonConverter with schemas, and Confluent Avro. Then:
- confluent-kafka's `AvroDeserializer` (Python, mock registry) reads each Avro record to the
  values of the JSON record's payload;
- Confluent's Java `AvroData` derives, from the Connect schema Kafka's JsonConverter reads in
  our JSON record, exactly the Avro schema we registered (properties included), and
  Confluent's `AvroConverter` reads our Avro bytes to the same Connect value;
- a schema after `ADD COLUMN ... NOT NULL DEFAULT` passes the registry's BACKWARD rule.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Context, Decimal
from typing import Any

from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry._sync.mock_schema_registry_client import (
    MockSchemaRegistryClient,
)
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from connector.events import EventEncoder, SourceInfo
from connector.events.converters import AVRO_CONVERTER
from connector.schema import TableSchema
from connector.settings.model import ConnectorConfig
from connector.settings.parse import parse_config
from tests import connect_oracle
from tests.integration.test_type_mapping import _binlog_rows, _insert, _select_rows_of
from tests.services import MariaDbPair


def _config(db: str, avro: bool) -> ConnectorConfig:
    settings: dict[str, Any] = {"database.hostname": "h", "database.user": "u",
                                "database.server.id": 5, "topic.prefix": db,
                                "bootstrap.servers": "b"}
    if avro:
        settings |= {"key.converter": AVRO_CONVERTER, "value.converter": AVRO_CONVERTER,
                     "key.converter.schema.registry.url": "mock://avro-test",
                     "value.converter.schema.registry.url": "mock://avro-test"}
    return parse_config({"name": "avro-test", "config": settings})


def _registry() -> tuple[MockSchemaRegistryClient, Any]:
    client = MockSchemaRegistryClient({"url": "mock://avro-test"})

    def lookup(subject: str, schema_json: str) -> int:
        return int(client.register_schema(subject, Schema(schema_json, "AVRO")))
    return client, lookup


def _as_json_value(value: Any, schema: dict[str, Any]) -> Any:
    """A value read from Avro written as JsonConverter writes it (bytes, decimals as base64)."""
    if value is None:
        return None
    if schema["type"] == "struct":
        return {f["field"]: _as_json_value(value[f["field"]], f) for f in schema["fields"]}
    if schema["type"] == "array":
        return [_as_json_value(v, schema["items"]) for v in value]
    if isinstance(value, Decimal):
        scale = int(schema["parameters"]["scale"])
        unscaled = int(value.scaleb(scale, Context(prec=100)))
        size = max(1, (unscaled.bit_length() + 8) // 8)
        return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return value


def _schema_diff(expected: str, ours: str) -> list[str]:
    """The parts of two Avro schemas that differ, as JSON paths: readable failures."""
    out: list[str] = []

    def walk(a: Any, b: Any, path: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                walk(a.get(k, "<absent>"), b.get(k, "<absent>"), f"{path}.{k}")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{path}[{i}]")
        elif a != b:
            out.append(f"{path}: Confluent {a!r} / ours {b!r}")

    walk(json.loads(expected), json.loads(ours), "$")
    return out


def _records(mariadb: MariaDbPair, db: str) -> tuple[TableSchema, list[tuple[str, Any, Any]]]:
    """(op, before, after) for every streamed and snapshotted row of the every-type table."""
    start = mariadb.replica.gtid_binlog_pos()
    mariadb.primary.execute(f"CREATE DATABASE {db}")
    _insert(mariadb, db)
    mariadb.wait_synced()
    schema, streamed = _binlog_rows(mariadb, db, start)
    _, selected = _select_rows_of(mariadb, db, "every")
    changes = [("c", None, r) for r in streamed] + [("r", None, r) for r in selected]
    changes += [("u", streamed[1], streamed[2]), ("d", streamed[2], None)]
    return schema, changes


def test_avro_records_decode_to_the_json_payload_in_python_and_java(
        mariadb: MariaDbPair, unique_name: str) -> None:
    db = unique_name
    schema, changes = _records(mariadb, db)
    client, lookup = _registry()
    as_json = EventEncoder(_config(db, avro=False)).table(schema)
    as_avro = EventEncoder(_config(db, avro=True), schema_ids=lookup).table(schema)
    source = SourceInfo(ts_us=1_700_000_000_000_000, db=db, table="every", server_id=1,
                        gtid="0-1-7", file="mariadb-bin.000001", pos=1234, row=0, thread=3,
                        query=None)
    topic = as_json.topic
    values = AvroDeserializer(client)
    requests: list[dict[str, Any]] = []
    for op, before, after in changes:
        json_value = as_json.value(op, before, after, source, 1_700_000_000_123)
        avro_value = as_avro.value(op, before, after, source, 1_700_000_000_123)
        document = json.loads(json_value)
        decoded = values(avro_value, SerializationContext(topic, MessageField.VALUE))
        assert _as_json_value(decoded, document["schema"]) == document["payload"], op
        requests.append({"kind": "value", "topic": topic, "is_key": False,
                         "json": json_value.decode(), "avro": base64.b64encode(avro_value).decode(),
                         "avro_schema": as_avro._value_codec.avro_schema_json})  # type: ignore[attr-defined]
        row = after if after is not None else before
        json_key, avro_key = as_json.key(row), as_avro.key(row)
        assert json_key is not None and avro_key is not None
        requests.append({"kind": "key", "topic": topic, "is_key": True,
                         "json": json_key.decode(), "avro": base64.b64encode(avro_key).decode(),
                         "avro_schema": as_avro._key_codec.avro_schema_json})  # type: ignore[union-attr]

    answers = connect_oracle.check(requests)
    for request, answer in zip(requests, answers, strict=True):
        assert "error" not in answer, (request["kind"], answer["error"])
        assert answer["schema_equal"], _schema_diff(answer["expected_avro_schema"],
                                                    request["avro_schema"])
        assert answer["avro_payload"] == answer["json_payload"], request["kind"]


def test_add_column_with_default_passes_backward_compatibility(
        mariadb: MariaDbPair, unique_name: str) -> None:
    db = unique_name
    mariadb.primary.execute(f"CREATE DATABASE {db}")
    mariadb.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, a VARCHAR(10))")
    mariadb.wait_synced()
    old, _ = _select_rows_of(mariadb, db, "t")
    mariadb.primary.execute(
        f"ALTER TABLE {db}.t ADD COLUMN qty INT NOT NULL DEFAULT 7, "
        "ADD COLUMN note VARCHAR(5) NOT NULL DEFAULT 'n/a', "
        "ADD COLUMN at DATETIME NOT NULL DEFAULT '2024-01-02 03:04:05', "
        "ADD COLUMN price DECIMAL(8,2) NOT NULL DEFAULT 1.50, "
        "ADD COLUMN tag BINARY(2) NOT NULL DEFAULT 'ab'")
    mariadb.wait_synced()
    mariadb.primary.execute(f"INSERT INTO {db}.t (id, a) VALUES (1, 'x')")
    mariadb.wait_synced()
    new, rows = _select_rows_of(mariadb, db, "t")
    _, lookup = _registry()
    encoder = EventEncoder(_config(db, avro=True), schema_ids=lookup)
    old_avro = encoder.table(old)._value_codec.avro_schema_json  # type: ignore[attr-defined]
    as_avro = encoder.table(new)
    new_avro = as_avro._value_codec.avro_schema_json  # type: ignore[attr-defined]
    fields = {f["name"]: f for f in json.loads(new_avro)["fields"][0]["type"][1]["fields"]}
    assert fields["qty"]["default"] == 7 and fields["note"]["default"] == "n/a"
    at_default = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    assert fields["at"]["default"] == int(at_default.timestamp() * 1000)
    source = SourceInfo(ts_us=0, db=db, table="t", server_id=1, gtid="0-1-1", file="f",
                        pos=4, row=0, thread=None, query=None)
    json_value = EventEncoder(_config(db, avro=False)).table(new).value(
        "c", None, rows[0], source, 0)
    avro_value = as_avro.value("c", None, rows[0], source, 0)
    backward, value = connect_oracle.check([
        {"kind": "backward", "new": new_avro, "old": old_avro},
        {"kind": "value", "topic": as_avro.topic, "is_key": False, "json": json_value.decode(),
         "avro": base64.b64encode(avro_value).decode(), "avro_schema": new_avro}])
    assert "error" not in backward and backward["errors"] == []
    assert "error" not in value, value["error"]
    assert value["schema_equal"], _schema_diff(value["expected_avro_schema"], new_avro)
    assert value["avro_payload"] == value["json_payload"]
