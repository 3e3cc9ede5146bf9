"""The compiled JSON writer writes exactly the bytes the generic dict + encoder path writes."""

from __future__ import annotations

import base64
import datetime as dt
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from connector.compiled import RowWriter
from connector.events import EventEncoder, SourceInfo
from connector.events.converters import JsonCodec, dumps
from connector.events.source_block import SourceStruct
from connector.events.types import RowConverter, field_mapping
from connector.schema import Column, TableSchema
from connector.settings.model import ConnectorConfig
from connector.settings.parse import parse_config

TABLE = TableSchema("shop", "all_types", (
    Column("id", "bigint", nullable=False, unsigned=True),
    Column("small", "smallint"),
    Column("name", "varchar", length=40, charset="utf8mb4"),
    Column("code", "char", nullable=False, length=4, charset="utf8mb4"),
    Column("price", "decimal", precision=12, scale=3),
    Column("ratio", "double"),
    Column("f", "float"),
    Column("raw", "varbinary", length=16),
    Column("flag", "bit", length=1),
    Column("at", "datetime", scale=6),
    Column("ts", "timestamp", scale=3),
    Column("doc", "json"),
), ("id", "code"))

ROWS = st.fixed_dictionaries({
    "id": st.integers(0, 2**64 - 1),
    "small": st.none() | st.integers(-(2**15), 2**15 - 1),
    "name": st.none() | st.text(),
    "code": st.none() | st.text(max_size=4),
    "price": st.none() | st.decimals(-(10**8), 10**8, places=3, allow_nan=False),
    "ratio": st.none() | st.floats(allow_nan=True, allow_infinity=True),
    "f": st.none() | st.floats(-1e30, 1e30),
    "raw": st.none() | st.binary(max_size=16),
    "flag": st.none() | st.sampled_from(["0", "1"]),
    "at": st.none() | st.datetimes(dt.datetime(1000, 1, 1)),
    "ts": st.none() | st.datetimes(dt.datetime(1971, 1, 1), dt.datetime(2037, 1, 1)),
    "doc": st.none() | st.text(),
})
SOURCES = st.builds(SourceInfo, ts_us=st.integers(0, 2**51), db=st.text(min_size=1),
                    table=st.none() | st.text(), server_id=st.integers(0, 2**32 - 1),
                    gtid=st.none() | st.text(), file=st.text(), pos=st.integers(0, 2**40),
                    row=st.integers(0, 10_000), thread=st.none() | st.integers(0, 2**40),
                    query=st.none() | st.text(),
                    snapshot=st.sampled_from(["false", "incremental", "true", "last"]))


def config(**extra: Any) -> ConnectorConfig:
    base = {"database.hostname": "h", "database.user": "u", "database.server.id": 5,
            "topic.prefix": "app", "bootstrap.servers": "b"}
    return parse_config({"name": "conn", "config": {**base, **extra}})


@settings(max_examples=300, deadline=None)
@given(ROWS)
def test_row_writer_equals_generic_encoder(row: dict[str, Any]) -> None:
    maps = [field_mapping(c) for c in TABLE.columns]
    generic = dumps(RowConverter(TABLE.columns, maps)(row))
    writer = RowWriter([(c.name, m.convert, m.fallback, m.compiled)
                        for c, m in zip(TABLE.columns, maps, strict=True)], dumps)
    assert writer.row(row) == generic.encode("utf-8")


@settings(max_examples=200, deadline=None)
@given(ROWS, ROWS, SOURCES, st.sampled_from(["c", "u", "d", "r"]), st.booleans(),
       st.booleans(), st.integers(0, 2**41))
def test_envelope_fast_path_equals_generic_payload(before: dict[str, Any],
                                                   after: dict[str, Any], source: SourceInfo,
                                                   op: str, schemas: bool, with_tx: bool,
                                                   ts_ms: int) -> None:
    cfg = config(**{"value.converter.schemas.enable": str(schemas).lower(),
                    "key.converter.schemas.enable": str(schemas).lower()})
    enc = EventEncoder(cfg).table(TABLE)
    tx = {"id": "0-1-2", "total_order": 3, "data_collection_order": 1} if with_tx else None
    b = None if op in ("c", "r") else before
    a = None if op == "d" else after
    payload = {"before": None if b is None else enc.row_values(b),
               "after": None if a is None else enc.row_values(a),
               "source": SourceStruct(cfg.flavour, cfg.topic_prefix)(source),
               "transaction": tx, "op": op,
               "ts_ms": ts_ms, "ts_us": ts_ms * 1000, "ts_ns": ts_ms * 1_000_000}
    expected = JsonCodec(enc.value_schema, schemas).encode(payload)
    assert enc.value(op, b, a, source, ts_ms, tx) == expected
    key_maps = [field_mapping(TABLE.column(n)) for n in ("id", "code")]
    key_payload = RowConverter([TABLE.column("id"), TABLE.column("code")], key_maps)(after)
    assert enc.key(after) == JsonCodec(enc.key_schema or {}, schemas).encode(key_payload)


def test_source_block_is_reserialized_when_any_field_changes() -> None:
    enc = EventEncoder(config()).table(TABLE)
    row = {"id": 1, "code": "a"}
    first = SourceInfo(ts_us=1000, db="shop", table="all_types", server_id=1, gtid="0-1-1",
                       file="f", pos=4, row=0, thread=None, query=None)
    one = enc.value("c", None, row, first, 5)
    first.row = 1
    two = enc.value("c", None, row, first, 5)
    first.gtid = "0-1-2"
    three = enc.value("c", None, row, first, 5)
    assert b'"row":0,' in one and b'"row":1,' in two and b'"gtid":"0-1-1"' in two
    assert b'"gtid":"0-1-2"' in three and b'"row":1,' in three


def test_decimal_and_bytes_are_base64_like_json_converter() -> None:
    maps = [field_mapping(c) for c in TABLE.columns]
    writer = RowWriter([(c.name, m.convert, m.fallback, m.compiled)
                        for c, m in zip(TABLE.columns, maps, strict=True)], dumps)
    text = writer.row({"id": 1, "code": "x", "price": Decimal("-1.500"),
                       "raw": b"\x00\xff"}).decode()
    price = base64.b64encode((-1500).to_bytes(2, "big", signed=True)).decode()
    assert f'"price":"{price}"' in text and '"raw":"AP8="' in text
