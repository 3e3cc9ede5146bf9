"""The compiled Avro writer (connector/native/src/avro.rs) against fastavro over the payload
dicts the Python encoder built (tests/reference_avro.py).

Random rows of every column type at its edges (test_native_encoder's), under every setting
that changes what is written: flavour, decimal.handling.mode, time.precision.mode,
ignore.default.for.nullables, column masks and truncation, Avro for key and value or for one
of them (the other JSON), with and without a transaction block. The bytes are fastavro's and
read back with fastavro to the payload.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import math
import struct
from decimal import Context, Decimal
from typing import Any
from unittest import mock

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.compiled import AvroRows
from connector.events import EventEncoder, SourceInfo, TableEncoder
from connector.events.avro_writer import describe, fastavro_writer
from connector.schema import TableSchema
from connector.settings.model import AVRO_CONVERTER, JSON_CONVERTER
from connector.settings.parse import parse_config
from tests.reference_avro import ReferenceAvro
from tests.reference_encoder import ReferenceEncoder
from tests.unit.test_native_encoder import NO_KEY, ROWS, SOURCES, TABLE, check_batch, outcome

CONVERTERS = [(AVRO_CONVERTER, AVRO_CONVERTER), (JSON_CONVERTER, AVRO_CONVERTER),
              (AVRO_CONVERTER, JSON_CONVERTER)]
SETTINGS = st.tuples(st.sampled_from(["mariadb", "mysql"]),
                     st.sampled_from(["precise", "string", "double"]),
                     st.sampled_from(["adaptive_time_microseconds", "connect"]),
                     st.booleans(), st.booleans(), st.booleans(), st.sampled_from(CONVERTERS))
TRANSACTIONS = st.none() | st.fixed_dictionaries({
    "id": st.text(), "total_order": st.integers(1, 2**40),
    "data_collection_order": st.integers(1, 2**40)})


def schema_id(subject: str, schema_json: str) -> int:
    """A registry whose ids differ per subject (the framing is checked with them)."""
    return 1000 + len(subject)


class Oracle:
    """Each record as the Python encoder wrote it: fastavro for Avro, the JSON reference."""

    def __init__(self, avro: ReferenceAvro, json: ReferenceEncoder,
                 converters: tuple[str, str]) -> None:
        self.avro, self.json = avro, json
        self.key_avro, self.value_avro = (c == AVRO_CONVERTER for c in converters)

    def key(self, row: dict[str, Any]) -> bytes | None:
        return (self.avro if self.key_avro else self.json).key(row)

    def value(self, *args: Any) -> bytes:
        return (self.avro if self.value_avro else self.json).value(*args)


@functools.cache
def encoders(flavour: str, decimal: str, time: str, key_ignore: bool, value_ignore: bool,
             mappers: bool, converters: tuple[str, str], table: TableSchema = TABLE
             ) -> tuple[TableEncoder, Oracle]:
    mapper_keys = {"column.mask.with.5.chars": "shop.all.t_masked",
                   "column.truncate.to.3.chars": "shop.all.t_cut,shop.all.t_blob"}
    config = parse_config({"name": "conn", "config": {
        "database.hostname": "h", "database.user": "u", "database.server.id": 5,
        "topic.prefix": "app", "bootstrap.servers": "b",
        "decimal.handling.mode": decimal, "time.precision.mode": time,
        "key.converter": converters[0], "value.converter": converters[1],
        "key.converter.ignore.default.for.nullables": str(key_ignore).lower(),
        "value.converter.ignore.default.for.nullables": str(value_ignore).lower(),
        **(mapper_keys if mappers else {})}}).with_server_flavour(flavour)
    enc = EventEncoder(config, schema_ids=schema_id).table(table)
    return enc, Oracle(ReferenceAvro(config, enc, schema_id), ReferenceEncoder(config, enc),
                       converters)


EXACT = Context(prec=100)  # the default context's 28 digits would round a DECIMAL(65,30)


def storable(row: dict[str, Any] | None) -> bool:
    """Every DECIMAL of `row` fits its column (rounded to its scale): the values a database
    gives. fastavro reads a decimal back rounded to the schema's precision, so a value beyond
    it (the SELECT-form strategies make some) is not read back as written."""
    for column in TABLE.columns:
        value = None if row is None else row.get(column.name)
        if column.type_name == "decimal" and isinstance(value, int | Decimal) \
                and Decimal(value).is_finite():
            assert column.precision is not None and column.scale is not None
            rounded = Decimal(value).quantize(Decimal(1).scaleb(-column.scale), context=EXACT)
            if abs(rounded) >= Decimal(10) ** (column.precision - column.scale):
                return False
    return True


def same(read: Any, written: Any) -> bool:
    """A value fastavro read back is the payload's: a float field holds the 32-bit value, a
    Decimal field the decimal of the unscaled bytes written."""
    if isinstance(read, dict) and isinstance(written, dict):
        return read.keys() == written.keys() and all(same(read[k], written[k]) for k in read)
    if isinstance(read, list) and isinstance(written, list):
        return len(read) == len(written) and all(map(same, read, written))
    if isinstance(read, float) and isinstance(written, float):
        narrow = struct.unpack("<f", struct.pack("<f", written))[0] \
            if math.isfinite(written) and abs(written) < 3.4e38 else written
        return read in (written, narrow) or (math.isnan(read) and math.isnan(written))
    if isinstance(read, Decimal) and isinstance(written, bytes):
        return read == Decimal(int.from_bytes(written, "big", signed=True)).scaleb(
            read.as_tuple().exponent, EXACT)  # type: ignore[arg-type]
    return bool(type(read) is type(written) and read == written)


@settings(max_examples=400, deadline=None)
@given(SETTINGS, ROWS, ROWS, SOURCES, st.sampled_from(["c", "u", "d", "r", "t"]),
       TRANSACTIONS, st.integers(0, 2**41), st.booleans())
def test_avro_record_bytes_are_fastavros_over_the_payload(
        setting: tuple[Any, ...], before: dict[str, Any], after: dict[str, Any],
        source: SourceInfo, op: str, tx: dict[str, Any] | None, ts_ms: int,
        keyless: bool) -> None:
    enc, ref = encoders(*setting, table=NO_KEY if keyless else TABLE)
    b = None if op in ("c", "r", "t") else before
    a = None if op in ("d", "t") else after
    got = outcome(lambda: enc.value(op, b, a, source, ts_ms, tx))
    assert got == outcome(lambda: ref.value(op, b, a, source, ts_ms, tx))
    assert outcome(lambda: enc.key(after)) == outcome(lambda: ref.key(after))
    if ref.value_avro and isinstance(got, bytes):
        assert int.from_bytes(got[1:5], "big") == schema_id(f"{enc.topic}-value", "")
        if storable(b) and storable(a):
            assert same(enc.decode_value(got), ref.avro.payload(op, b, a, source, ts_ms, tx))


@settings(max_examples=150, deadline=None)
@given(SETTINGS, st.lists(ROWS, max_size=5), SOURCES, st.sampled_from(["c", "u", "d", "r"]),
       st.none() | st.tuples(st.text(), st.integers(0, 2**40), st.integers(0, 2**40)),
       st.integers(0, 2**41))
def test_avro_batch_records_are_the_per_row_records_of_fastavro(
        setting: tuple[Any, ...], rows: list[dict[str, Any]], source: SourceInfo, op: str,
        tx: tuple[str, int, int] | None, ts_ms: int) -> None:
    check_batch(*encoders(*setting), rows, source, op, tx, ts_ms)


FLOAT = {"type": "float"}
ODD_VALUES = [  # what the compiled writer leaves to fastavro, with the type it is written as
    (FLOAT, struct.unpack("<d", b"\x01\x00\x00\x00\x00\x00\xf8\x7f")[0]),  # a NaN's payload
    (FLOAT, 1e300), (FLOAT, 3), ("int", 2**40), ("int", True), ("boolean", 3),
    ("bytes", bytearray(b"ab")), ({"type": "array", "items": "float"}, (1.0, 2.5)),
    (["null", "int"], 2**40), ("long", 2**64), ("string", "\ud800"),
    ({"type": "record", "name": "P", "fields": [{"name": "x", "type": "double"},
                                               {"name": "s", "type": ["null", "int"],
                                                "default": None}]}, {"x": 1.5}),
]


@pytest.mark.parametrize(("schema", "value"), ODD_VALUES)
def test_a_value_the_compiled_writer_leaves_is_written_by_fastavro(schema: Any,
                                                                   value: Any) -> None:
    rows = AvroRows([("v", describe(schema, {}), None, None, fastavro_writer(schema), None)])
    expected = io.BytesIO()
    expected.write(b"\x00")
    parsed = fastavro.parse_schema({"type": "record", "name": "R",
                                    "fields": [{"name": "v", "type": schema}]})
    want = outcome(lambda: fastavro.schemaless_writer(expected, parsed, {"v": value}))
    got = outcome(lambda: rows.record(b"\x00", {"v": value}))
    assert got == (expected.getvalue() if want is None else want)


GEOMETRY = struct.pack("<I", 4326) + bytes.fromhex("0101000000") + struct.pack("<dd", 1.5, -2)
TYPICAL = {  # one value of each column of TABLE, as the binlog decodes it
    "id": -(2**63), "code": "k1", "t_tiny": -128, "t_tiny_u": 255, "t_small": -1,
    "t_small_u": 65535, "t_medium": 8388607, "t_int": -(2**31), "t_int_u": 2**32 - 1,
    "t_big_u": 2**64 - 1, "t_bool": 1, "t_dec": Decimal("-12.5"), "t_dec_wide": Decimal("1e30"),
    "t_dec0": Decimal(7), "t_float": 0.1, "t_float_md": -3.25, "t_double": 1e308,
    "t_bit1": "1", "t_bits": "101010101010", "t_char": "é", "t_text": "x" * 200,
    "t_raw_text": b"caf\xe9", "t_binary": b"\x01", "t_blob": b"\x00\xff",
    "t_date": dt.date(2024, 5, 6), "t_time": dt.timedelta(hours=-838, microseconds=1),
    "t_dt0": dt.datetime(1, 1, 1), "t_dt6": dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
    "t_ts3": dt.datetime(2038, 1, 19, 3, 14, 7, 999000), "t_year": 2024,
    "t_enum": "b,c", "t_set": {"a", "é"}, "t_json": '{"a":1}',
    "t_vector": struct.pack("<2f", 1.5, -0.25), "t_geo": GEOMETRY, "t_point": GEOMETRY,
    'we"ird\\ñ\x01': 3, "t_default": "dflt2", "t_masked": "secret", "t_cut": "truncated",
}


@pytest.mark.parametrize("decimal", ["precise", "string", "double"])
def test_ordinary_values_of_every_type_are_written_by_the_compiled_writer(decimal: str
                                                                          ) -> None:
    """No fastavro on the hot path: a table whose fastavro writers refuse every value still
    writes a row of every column type, and the bytes are fastavro's over the payload."""
    def refused(schema: Any) -> Any:
        def write(value: Any) -> bytes:
            raise AssertionError(f"fastavro asked to write {value!r} as {schema!r}")
        return write

    setting = ("mysql", decimal, "adaptive_time_microseconds", False, False, True,
               CONVERTERS[0])
    _, ref = encoders(*setting)
    encoders.cache_clear()  # a table built with the refusing writers, then forgotten
    with mock.patch("connector.events.avro_writer.fastavro_writer", refused):
        enc, _ = encoders(*setting)
    encoders.cache_clear()
    source = SourceInfo(ts_us=1_700_000_000_123_456, db="shop", table="all", server_id=1,
                        gtid="0-1-42", file="binlog.000002", pos=4711, row=3, thread=9,
                        query=None)
    tx = {"id": "0-1-42", "total_order": 2, "data_collection_order": 1}
    assert enc.value("u", TYPICAL, TYPICAL, source, 5, tx) == \
        ref.value("u", TYPICAL, TYPICAL, source, 5, tx)
    assert enc.key(TYPICAL) == ref.key(TYPICAL)
