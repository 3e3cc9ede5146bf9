"""Envelope shapes (c/u/d/r), keys, side records, and the JSON / Avro wire formats."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import io
import json
from decimal import Decimal
from typing import Any

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.binlog.ddl import parse_ddl
from connector.binlog.declared import DeclaredColumns
from connector.events import EventEncoder, SourceInfo, table_change
from connector.events.avro import avro_schema
from connector.events.converters import AVRO_CONVERTER, dumps
from connector.events.source_block import SourceStruct
from connector.schema import Column, TableSchema
from connector.settings.model import ConnectorConfig
from connector.settings.parse import parse_config

TABLE = TableSchema("shop", "orders", (
    Column("id", "int", nullable=False),
    Column("code", "varchar", nullable=False, length=8, charset="utf8mb4"),
    Column("price", "decimal", precision=10, scale=2),
    Column("secret", "varchar", length=20, charset="utf8mb4"),
    Column("at", "timestamp", scale=3),
), ("id", "code"))
ROW = {"id": 7, "code": "A1", "price": Decimal("-3.50"), "secret": "pw",
       "at": dt.datetime(2024, 5, 6, 7, 8, 9, 10000)}
SOURCE = SourceInfo(ts_us=1_700_000_000_000_000, db="shop", table="orders", server_id=1,
                    gtid="0-1-42", file="binlog.000002", pos=4711, row=0, thread=9, query=None)


def config(**extra: Any) -> ConnectorConfig:
    base = {"database.hostname": "h", "database.user": "u", "database.server.id": 5,
            "topic.prefix": "app", "bootstrap.servers": "b"}
    return parse_config({"name": "conn", "config": {**base, **extra}})


def decode(raw: bytes | None) -> Any:
    assert raw is not None
    return json.loads(raw)


def test_create_event_has_debezium_envelope_shape() -> None:
    enc = EventEncoder(config()).table(TABLE)
    assert enc.topic == "app.shop.orders"
    msg = decode(enc.value("c", None, ROW, SOURCE, 1_700_000_000_123))
    schema, payload = msg["schema"], msg["payload"]
    assert schema["name"] == "app.shop.orders.Envelope" and schema["version"] == 2
    assert [f["field"] for f in schema["fields"]] == [
        "before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]
    assert schema["fields"][0]["name"] == "app.shop.orders.Value"
    assert schema["fields"][2]["name"] == "io.debezium.connector.mysql.Source"
    assert [f["field"] for f in schema["fields"][2]["fields"]] == [
        "version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us",
        "ts_ns", "table", "server_id", "gtid", "file", "pos", "row", "thread", "query"]
    assert payload["op"] == "c" and payload["before"] is None
    assert payload["after"] == {"id": 7, "code": "A1",
                                "price": base64.b64encode(b"\xfe\xa2").decode(),
                                "secret": "pw", "at": "2024-05-06T07:08:09.010Z"}
    assert payload["source"] == {
        "version": payload["source"]["version"], "connector": "mysql", "name": "app",
        "ts_ms": 1_700_000_000_000, "snapshot": "false", "db": "shop", "sequence": None,
        "ts_us": 1_700_000_000_000_000, "ts_ns": 1_700_000_000_000_000_000,
        "table": "orders", "server_id": 1, "gtid": "0-1-42", "file": "binlog.000002",
        "pos": 4711, "row": 0, "thread": 9, "query": None}
    assert (payload["ts_ms"], payload["ts_us"]) == (1_700_000_000_123, 1_700_000_000_123_000)
    assert payload["transaction"] is None


def test_json_is_compact() -> None:
    raw = EventEncoder(config()).table(TABLE).value("c", None, ROW, SOURCE, 1)
    assert b": " not in raw and b", " not in raw


@pytest.mark.parametrize("op", ["u", "d", "r"])
def test_update_delete_read_fill_before_and_after(op: str) -> None:
    enc = EventEncoder(config()).table(TABLE)
    after = {**ROW, "price": Decimal("1.00")}
    source = dataclasses.replace(SOURCE)
    if op == "r":
        source.snapshot = "incremental"
    before = ROW if op in ("u", "d") else None
    payload = decode(enc.value(op, before, None if op == "d" else after, source, 5))["payload"]
    assert payload["op"] == op
    assert (payload["before"] is None) == (op == "r")
    assert (payload["after"] is None) == (op == "d")
    if op == "r":
        assert payload["source"]["snapshot"] == "incremental"


def test_key_uses_primary_key_in_order() -> None:
    enc = EventEncoder(config()).table(TABLE)
    key = decode(enc.key(ROW))
    assert key["schema"] == {"type": "struct", "fields": [
        {"type": "int32", "optional": False, "field": "id"},
        {"type": "string", "optional": False, "field": "code"}],
        "optional": False, "name": "app.shop.orders.Key"}
    assert key["payload"] == {"id": 7, "code": "A1"}
    assert enc.key_values(ROW) == (7, "A1")


def test_table_without_key_has_null_key_unless_surrogate() -> None:
    keyless = TableSchema("shop", "log", TABLE.columns, ())
    encoder = EventEncoder(config())
    assert encoder.table(keyless).key(ROW) is None
    surrogate = encoder.table(keyless, ("code",))
    assert decode(surrogate.key(ROW))["payload"] == {"code": "A1"}
    assert surrogate.key_values(ROW) == ("A1",)


def test_encoders_are_cached_per_schema() -> None:
    encoder = EventEncoder(config())
    same = TableSchema("shop", "orders", TABLE.columns, TABLE.primary_key)
    assert encoder.table(TABLE) is encoder.table(same)
    assert encoder.table(TABLE) is not encoder.table(TABLE, ("id",))


def test_column_exclude_list_drops_value_columns() -> None:
    enc = EventEncoder(config(**{"column.exclude.list": r"shop\.orders\.secret"})).table(TABLE)
    msg = decode(enc.value("c", None, ROW, SOURCE, 1))
    after_fields = [f["field"] for f in msg["schema"]["fields"][1]["fields"]]
    assert after_fields == ["id", "code", "price", "at"]
    assert "secret" not in msg["payload"]["after"]


def test_schemaless_json_writes_payload_only() -> None:
    cfg = config(**{"value.converter.schemas.enable": "false",
                    "key.converter.schemas.enable": "false"})
    enc = EventEncoder(cfg).table(TABLE)
    assert decode(enc.key(ROW)) == {"id": 7, "code": "A1"}
    value = decode(enc.value("c", None, ROW, SOURCE, 1))
    assert set(value) == {"before", "after", "source", "transaction", "op", "ts_ms", "ts_us",
                          "ts_ns"}


def test_mariadb_flavour_names_connector_and_source() -> None:
    cfg = config(**{"connector.class": "io.debezium.connector.mariadb.MariaDbConnector"})
    msg = decode(EventEncoder(cfg).table(TABLE).value("c", None, ROW, SOURCE, 1))
    assert msg["payload"]["source"]["connector"] == "mariadb"
    assert msg["schema"]["fields"][2]["name"] == "io.debezium.connector.mariadb.Source"


def test_heartbeat_record() -> None:
    topic, key, value = EventEncoder(config()).heartbeat(123)
    assert topic == "__debezium-heartbeat.app"
    assert decode(key)["payload"] == {"serverName": "app"}
    assert decode(key)["schema"]["name"] == "io.debezium.connector.common.ServerNameKey"
    assert decode(value)["payload"] == {"ts_ms": 123}
    assert decode(value)["schema"]["name"] == "io.debezium.connector.common.Heartbeat"


def test_transaction_records() -> None:
    encoder = EventEncoder(config())
    topic, key, begin = encoder.transaction("BEGIN", "0-1-42", 10, 0, {})
    assert topic == "app.transaction"
    assert decode(key)["payload"] == {"id": "0-1-42"}
    assert decode(begin)["payload"] == {"status": "BEGIN", "id": "0-1-42", "event_count": None,
                                        "data_collections": None, "ts_ms": 10}
    _, _, end = encoder.transaction("END", "0-1-42", 11, 3, {"shop.orders": 3})
    assert decode(end)["payload"]["data_collections"] == [
        {"data_collection": "shop.orders", "event_count": 3}]
    assert decode(end)["schema"]["name"] == "io.debezium.connector.common.TransactionMetadataValue"


def test_schema_change_record() -> None:
    encoder = EventEncoder(config())
    declared = DeclaredColumns()
    sql = ("CREATE TABLE orders (id INT, code VARCHAR(8), price DECIMAL(10,2), secret TEXT, "
           "at DATETIME(3), PRIMARY KEY (id, code))")
    declared.apply(sql, parse_ddl(sql, "shop"))
    change = table_change("CREATE", "shop", "orders", declared.table("shop.orders"), "utf8mb4")
    topic, key, value = encoder.schema_change(SOURCE, "CREATE TABLE orders (...)", "shop",
                                              [change])
    assert topic == "app"
    assert decode(key)["payload"] == {"databaseName": "shop"}
    payload = decode(value)["payload"]
    assert payload["ddl"] == "CREATE TABLE orders (...)" and payload["databaseName"] == "shop"
    table = payload["tableChanges"][0]
    assert table["id"] == '"shop"."orders"' and table["type"] == "CREATE"
    assert table["table"]["primaryKeyColumnNames"] == ["id", "code"]
    assert [c["name"] for c in table["table"]["columns"]] == ["id", "code", "price", "secret",
                                                              "at"]
    price = table["table"]["columns"][2]
    assert (price["typeName"], price["jdbcType"], price["length"], price["scale"]) == \
        ("DECIMAL", 3, 10, 2)
    assert table["table"]["columns"][1]["optional"] is False  # a key column


def avro_config() -> ConnectorConfig:
    return config(**{"key.converter": AVRO_CONVERTER, "value.converter": AVRO_CONVERTER})


def test_avro_wire_format_and_round_trip() -> None:
    registered: dict[str, str] = {}

    def lookup(subject: str, schema_json: str) -> int:
        registered[subject] = schema_json
        return 4242

    enc = EventEncoder(avro_config(), schema_ids=lookup).table(TABLE)
    raw = enc.value("c", None, ROW, SOURCE, 99)
    assert raw[:1] == b"\x00" and int.from_bytes(raw[1:5], "big") == 4242
    schema = fastavro.parse_schema(json.loads(registered["app.shop.orders-value"]))
    record = fastavro.schemaless_reader(io.BytesIO(raw[5:]), schema, None)
    assert isinstance(record, dict)
    assert record["op"] == "c" and record["ts_ms"] == 99
    assert record["after"]["price"] == Decimal("-3.50")
    assert record["after"]["at"] == "2024-05-06T07:08:09.010Z"
    assert record["source"]["gtid"] == "0-1-42"
    key = enc.key(ROW)
    assert key is not None and int.from_bytes(key[1:5], "big") == 4242
    key_schema = fastavro.parse_schema(json.loads(registered["app.shop.orders-key"]))
    assert fastavro.schemaless_reader(io.BytesIO(key[5:]), key_schema, None) == {
        "id": 7, "code": "A1"}


def test_avro_schema_follows_confluent_avrodata() -> None:
    enc = EventEncoder(avro_config(), schema_ids=lambda s, j: 1).table(TABLE)
    avro = avro_schema(enc.value_schema)
    assert (avro["namespace"], avro["name"]) == ("app.shop.orders", "Envelope")
    before, after = avro["fields"][0], avro["fields"][1]
    assert before["type"][0] == "null" and before["default"] is None
    assert after["type"] == ["null", "app.shop.orders.Value"]  # defined once, then referenced
    price = before["type"][1]["fields"][2]["type"][1]
    assert price == {"type": "bytes", "scale": 2, "precision": 10, "connect.version": 1,
                     "connect.parameters": {"scale": "2", "connect.decimal.precision": "10"},
                     "connect.name": "org.apache.kafka.connect.data.Decimal",
                     "logicalType": "decimal"}
    snapshot = avro["fields"][2]["type"]["fields"][4]
    assert snapshot["default"] == "false" and snapshot["type"][1] == "null"


def test_tombstone_is_null_value_for_every_converter() -> None:
    for cfg in (config(), avro_config()):
        enc = EventEncoder(cfg, schema_ids=lambda s, j: 1).table(TABLE)
        assert enc._value_codec.encode(None) is None


def test_unknown_converter_is_refused() -> None:
    with pytest.raises(ValueError, match="value.converter"):
        EventEncoder(config(**{"value.converter": "org.example.Nope"}))


@pytest.mark.parametrize("schemas", ["true", "false"])
def test_a_row_encoded_ahead_and_framed_is_the_read_record(schemas: str) -> None:
    """The chunk reader's `read_row` in one encoder, framed by another (as across the
    processes): the same key and value bytes as encoding the row at once."""
    settings = {"key.converter.schemas.enable": schemas, "value.converter.schemas.enable": schemas}
    here = EventEncoder(config(**settings)).table(TABLE)
    encoding = here.row_encoding
    assert encoding is not None
    there = EventEncoder(config(**settings)).table(encoding.schema, encoding.key_columns)
    source = dataclasses.replace(SOURCE, snapshot="incremental", gtid=None, row=0)
    head, tail = here.read_framing(source, 1_700_000_000_123)
    for row in (ROW, {**ROW, "secret": None, "code": "é\u2028\"\\"}):
        key, after = there.read_row(row)
        assert key == here.key(row)
        assert b"".join((head, after, tail)) == here.value("r", None, row, source,
                                                           1_700_000_000_123)


def test_avro_encoders_leave_the_rows_to_this_process() -> None:
    avro = config(**{"value.converter": AVRO_CONVERTER,
                     "value.converter.schema.registry.url": "http://registry:8081"})
    assert EventEncoder(avro, schema_ids=lambda subject, schema: 1).table(TABLE) \
        .row_encoding is None


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=300, deadline=None)
@given(ts=st.integers(0, 2**55), snapshot=st.sampled_from(["false", "incremental", "last"]),
       db=_TEXT, table=st.none() | _TEXT, server_id=st.integers(0, 2**32 - 1),
       gtid=st.none() | _TEXT, file=_TEXT, pos=st.integers(0, 2**40),
       thread=st.none() | st.integers(0, 2**32), query=st.none() | _TEXT,
       name=_TEXT, row=st.integers(0, 10**6))
def test_source_block_text_is_what_dumps_writes(ts: int, snapshot: str, db: str,
                                                table: str | None, server_id: int,
                                                gtid: str | None, file: str, pos: int,
                                                thread: int | None, query: str | None,
                                                name: str, row: int) -> None:
    source = SourceStruct("mariadb", name)
    info = SourceInfo(ts_us=ts, db=db, table=table, server_id=server_id, gtid=gtid, file=file,
                      pos=pos, row=row, thread=thread, query=query, snapshot=snapshot)
    head, tail = source.json_parts(info)
    assert head + str(row) + tail == dumps(source(info))


@pytest.mark.parametrize("converters", [
    {"key.converter": AVRO_CONVERTER, "value.converter": AVRO_CONVERTER},
    {"value.converter": AVRO_CONVERTER},
    {"key.converter": AVRO_CONVERTER},
])
def test_records_of_an_event_with_avro_are_its_per_row_records(converters: dict[str, str]
                                                               ) -> None:
    enc = EventEncoder(config(**converters), schema_ids=lambda s, j: 1).table(TABLE)
    rows = [ROW, {**ROW, "id": 8, "price": None}]
    source = dataclasses.replace(SOURCE)
    got = list(enc.records("u", [(r, r) for r in rows], source, 5, ("0-1-42", 10, 3)))
    expected = []
    for index, row in enumerate(rows):
        source.row = index
        tx = {"id": "0-1-42", "total_order": 11 + index, "data_collection_order": 4 + index}
        expected.append((enc.key(row), enc.value("u", row, row, source, 5, tx)))
    assert got == expected and got[0] != got[1]
