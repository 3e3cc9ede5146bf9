"""Debezium type mapping: schema fragments and values from both decoders (binlog and SELECT)."""

from __future__ import annotations

import base64
import datetime as dt
import re
import struct
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.events.converters import dumps
from connector.events.types import RowConverter, field_mapping, restore_empty_sets
from connector.events.values import decimal_precise, float32, unscaled_bytes
from connector.schema import Column, parse_enum_values

EPOCH = dt.datetime(1970, 1, 1)


def convert(column: Column, value: Any, **modes: str) -> Any:
    mapping = field_mapping(column, **modes)
    return RowConverter([column], [mapping])({column.name: value})[column.name]


def schema_of(column: Column, **modes: str) -> dict[str, Any]:
    return field_mapping(column, **modes).schema


# (column, expected schema fragment)
SCHEMAS = [
    (Column("a", "tinyint"), {"type": "int16", "optional": True}),
    (Column("a", "tinyint", unsigned=True), {"type": "int16", "optional": True}),
    (Column("a", "smallint"), {"type": "int16", "optional": True}),
    (Column("a", "smallint", unsigned=True), {"type": "int32", "optional": True}),
    (Column("a", "mediumint", unsigned=True), {"type": "int32", "optional": True}),
    (Column("a", "int", nullable=False), {"type": "int32", "optional": False}),
    (Column("a", "int", unsigned=True), {"type": "int64", "optional": True}),
    (Column("a", "bigint", unsigned=True), {"type": "int64", "optional": True}),
    (Column("a", "float"), {"type": "float", "optional": True}),
    (Column("a", "double"), {"type": "double", "optional": True}),
    (Column("a", "decimal", precision=10, scale=2),
     {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal",
      "version": 1, "parameters": {"scale": "2", "connect.decimal.precision": "10"}}),
    (Column("a", "varchar", length=5, charset="utf8mb4"), {"type": "string", "optional": True}),
    (Column("a", "longtext", charset="utf8mb4"), {"type": "string", "optional": True}),
    (Column("a", "varbinary", length=5), {"type": "bytes", "optional": True}),
    (Column("a", "blob"), {"type": "bytes", "optional": True}),
    (Column("a", "bit", length=1), {"type": "boolean", "optional": True}),
    (Column("a", "bit", length=12), {"type": "bytes", "optional": True,
                                     "name": "io.debezium.data.Bits", "version": 1,
                                     "parameters": {"length": "12"}}),
    (Column("a", "date"), {"type": "int32", "optional": True, "name": "io.debezium.time.Date",
                           "version": 1}),
    (Column("a", "time", scale=3), {"type": "int64", "optional": True,
                                    "name": "io.debezium.time.MicroTime", "version": 1}),
    (Column("a", "datetime", scale=3), {"type": "int64", "optional": True,
                                        "name": "io.debezium.time.Timestamp", "version": 1}),
    (Column("a", "datetime", scale=4), {"type": "int64", "optional": True,
                                        "name": "io.debezium.time.MicroTimestamp", "version": 1}),
    (Column("a", "timestamp", scale=6), {"type": "string", "optional": True,
                                         "name": "io.debezium.time.ZonedTimestamp",
                                         "version": 1}),
    (Column("a", "year"), {"type": "int32", "optional": True, "name": "io.debezium.time.Year",
                           "version": 1}),
    (Column("a", "enum", values=("x", "y")),
     {"type": "string", "optional": True, "name": "io.debezium.data.Enum", "version": 1,
      "parameters": {"allowed": "x,y"}}),
    (Column("a", "set", values=("x", "y")),
     {"type": "string", "optional": True, "name": "io.debezium.data.EnumSet", "version": 1,
      "parameters": {"allowed": "x,y"}}),
    (Column("a", "json"), {"type": "string", "optional": True, "name": "io.debezium.data.Json",
                           "version": 1}),
]


@pytest.mark.parametrize(("column", "expected"), SCHEMAS, ids=lambda v: getattr(v, "type_name", ""))
def test_schema_fragment_matches_debezium(column: Column, expected: dict[str, Any]) -> None:
    assert schema_of(column) == expected


def test_decimal_modes_change_schema_and_value() -> None:
    col = Column("a", "decimal", precision=8, scale=3)
    assert schema_of(col, decimal_mode="string") == {"type": "string", "optional": True}
    assert convert(col, Decimal("-1.5"), decimal_mode="string") == "-1.500"
    assert schema_of(col, decimal_mode="double") == {"type": "double", "optional": True}
    assert convert(col, Decimal("-1.5"), decimal_mode="double") == -1.5


def test_connect_time_precision_uses_kafka_logical_types() -> None:
    assert schema_of(Column("a", "date"), time_precision_mode="connect")["name"] == \
        "org.apache.kafka.connect.data.Date"
    col = Column("a", "time", scale=6)
    assert convert(col, dt.timedelta(seconds=1, microseconds=999), time_precision_mode="connect") \
        == 1000


# (column, value as mysql-replication decodes it, value as pymysql decodes it, expected)
POINT_1_2 = bytes(4) + b"\x01" + (1).to_bytes(4, "little") + struct.pack("<dd", 1.0, 2.0)
VALUES = [
    (Column("a", "bigint", unsigned=True), 2**64 - 1, 2**64 - 1, -1),
    (Column("a", "bigint", unsigned=True), 2**63 - 1, 2**63 - 1, 2**63 - 1),
    (Column("a", "int", unsigned=True), 2**32 - 1, 2**32 - 1, 2**32 - 1),
    (Column("a", "tinyint"), -128, -128, -128),
    (Column("a", "float"), 1.100000023841858, 1.1, 1.1),
    (Column("a", "float"), 0.10000000149011612, 0.1, 0.1),  # binlog float32, SELECT text
    (Column("a", "double"), 0.1, 0.1, 0.1),
    (Column("a", "decimal", precision=10, scale=2), Decimal("-12.34"), Decimal("-12.34"),
     (-1234).to_bytes(2, "big", signed=True)),
    (Column("a", "bit", length=1), "1", b"\x01", True),
    (Column("a", "bit", length=10), "0000000101", b"\x00\x05", b"\x05\x00"),
    (Column("a", "bit", length=16), "1000000000000001", b"\x80\x01", b"\x01\x80"),
    (Column("a", "binary", length=4), b"ab", b"ab\x00\x00", b"ab\x00\x00"),
    (Column("a", "binary", length=2), "", b"\x00\x00", b"\x00\x00"),
    (Column("a", "varbinary", length=4), b"\x00\x01", b"\x00\x01", b"\x00\x01"),
    (Column("a", "date"), dt.date(2024, 1, 2), dt.date(2024, 1, 2), 19724),
    (Column("a", "date"), dt.date(1969, 12, 31), dt.date(1969, 12, 31), -1),
    (Column("a", "date"), None, "0000-00-00", None),
    (Column("a", "date", nullable=False), None, "0000-00-00", 0),
    (Column("a", "time", scale=6), dt.timedelta(hours=-838, minutes=-59, seconds=-59),
     dt.timedelta(hours=-838, minutes=-59, seconds=-59), -(838 * 3600 + 59 * 60 + 59) * 10**6),
    (Column("a", "datetime", scale=3), dt.datetime(2024, 1, 2, 3, 4, 5, 123000),
     dt.datetime(2024, 1, 2, 3, 4, 5, 123000), 1704164645123),
    (Column("a", "datetime", scale=6), dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
     dt.datetime(1969, 12, 31, 23, 59, 59, 999999), -1),
    (Column("a", "datetime"), None, "0000-00-00 00:00:00", None),
    (Column("a", "timestamp", scale=6), dt.datetime(2024, 1, 2, 3, 4, 5, 123400),
     dt.datetime(2024, 1, 2, 3, 4, 5, 123400), "2024-01-02T03:04:05.123400Z"),
    (Column("a", "timestamp", scale=3), dt.datetime(2024, 1, 2, 3, 4, 5, 120000),
     dt.datetime(2024, 1, 2, 3, 4, 5, 120000), "2024-01-02T03:04:05.120Z"),
    (Column("a", "timestamp", scale=0), dt.datetime(2024, 1, 2, 3, 4, 5),
     dt.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02T03:04:05Z"),
    (Column("a", "timestamp"), EPOCH, "0000-00-00 00:00:00", None),
    (Column("a", "timestamp", nullable=False), EPOCH, "0000-00-00 00:00:00",
     "1970-01-01T00:00:00Z"),
    (Column("a", "year"), 2155, 2155, 2155),
    (Column("a", "year"), 1900, 0, 0),
    (Column("a", "enum", values=("x", "y")), "y", "y", "y"),
    (Column("a", "enum", values=("x", "y")), "", "", ""),
    (Column("a", "set", values=("a", "b", "c")), {"c", "a"}, "a,c", "a,c"),
    (Column("a", "set", values=("a", "b", "c")), "", "", ""),
    (Column("a", "set", values=("a",), nullable=False), None, "", ""),
    (Column("a", "json"), {b"k": [1, b"v"]}, '{"k":[1,"v"]}', '{"k":[1,"v"]}'),
    (Column("a", "varchar", charset="utf8mb4"), "héllo", "héllo", "héllo"),
    (Column("a", "geometry"), b"\xe6\x10\x00\x00\x01", b"\xe6\x10\x00\x00\x01",
     {"wkb": b"\x01", "srid": 4326}),
    (Column("a", "geometry"), b"\x00\x00\x00\x00\x01", b"\x00\x00\x00\x00\x01",
     {"wkb": b"\x01", "srid": None}),  # SRID 0: Debezium writes null
    (Column("a", "point"), POINT_1_2, POINT_1_2,
     {"x": 1.0, "y": 2.0, "wkb": POINT_1_2[4:], "srid": None}),
]


@pytest.mark.parametrize(("column", "binlog", "select", "expected"), VALUES)
def test_binlog_and_select_values_give_the_debezium_value(
        column: Column, binlog: Any, select: Any, expected: Any) -> None:
    assert convert(column, binlog) == expected
    assert convert(column, select) == expected


def test_null_stays_null_in_optional_columns() -> None:
    for column, *_ in VALUES:
        if column.nullable:
            assert convert(column, None) is None


def test_restore_empty_sets_only_touches_empty_set_sources() -> None:
    values: dict[str, Any] = {"s": None, "t": None}
    assert restore_empty_sets(values, {"s": "empty set", "t": "null"}) == {"s": "", "t": None}


def test_enum_values_parse_quotes_and_commas() -> None:
    assert parse_enum_values("enum('a','it''s','x,y')") == ("a", "it's", "x,y")


def _java_biginteger_bytes(n: int) -> bytes:
    """BigInteger.toByteArray(): minimal two's complement, at least one byte."""
    length = 1
    while not -(1 << (8 * length - 1)) <= n < (1 << (8 * length - 1)):
        length += 1
    return n.to_bytes(length, "big", signed=True)


@given(st.integers(min_value=-(10**65) + 1, max_value=10**65 - 1), st.integers(0, 30))
def test_decimal_unscaled_bytes_are_javas_biginteger(unscaled: int, scale: int) -> None:
    value = Decimal(f"{unscaled}E-{scale}")
    raw = unscaled_bytes(value, scale)
    assert raw == _java_biginteger_bytes(unscaled)
    assert int.from_bytes(raw, "big", signed=True) == unscaled


@given(st.integers(min_value=-(10**65) + 1, max_value=10**65 - 1), st.integers(0, 30),
       st.integers(0, 30))
def test_decimal_converter_equals_unscaled_bytes(digits: int, exponent: int, scale: int) -> None:
    """Any value, with fewer, as many or more fraction digits than the column's scale."""
    value = Decimal(f"{digits}E-{exponent}")
    assert decimal_precise(scale)(value) == unscaled_bytes(value, scale)
    assert decimal_precise(scale)(str(value)) == unscaled_bytes(value, scale)


@given(st.decimals(min_value=Decimal("-99999999.99"), max_value=Decimal("99999999.99"),
                   places=2, allow_nan=False, allow_infinity=False))
def test_decimal_json_is_base64_of_unscaled(value: Decimal) -> None:
    col = Column("a", "decimal", precision=10, scale=2)
    encoded = dumps(convert(col, value))
    raw = base64.b64decode(encoded.strip('"'))
    assert Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-2) == value
    assert convert(col, str(value)) == convert(col, value)  # pymysql may give text


@given(st.dates(min_value=dt.date(1000, 1, 1), max_value=dt.date(9999, 12, 31)))
def test_date_is_days_since_epoch(day: dt.date) -> None:
    assert convert(Column("a", "date"), day) == (day - dt.date(1970, 1, 1)).days


@given(st.datetimes(min_value=dt.datetime(1000, 1, 1), max_value=dt.datetime(9999, 12, 31)))
def test_datetime_epoch_units(moment: dt.datetime) -> None:
    micros = (moment - EPOCH) // dt.timedelta(microseconds=1)
    assert convert(Column("a", "datetime", scale=6), moment) == micros
    assert convert(Column("a", "datetime", scale=3), moment) == micros // 1000


@given(st.datetimes(min_value=dt.datetime(1970, 1, 1, 0, 0, 1),
                    max_value=dt.datetime(2038, 1, 19, 3, 14, 7)), st.integers(0, 6))
def test_zoned_timestamp_has_exactly_fsp_digits(moment: dt.datetime, fsp: int) -> None:
    moment = moment.replace(microsecond=moment.microsecond // 10 ** (6 - fsp) * 10 ** (6 - fsp))
    text = convert(Column("a", "timestamp", scale=fsp), moment)
    fraction = rf"\.\d{{{fsp}}}" if fsp else ""
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d" + fraction + "Z", text)
    parsed = dt.datetime.fromisoformat(text)
    assert parsed.replace(tzinfo=None) == moment


@given(st.timedeltas(min_value=-dt.timedelta(hours=838, minutes=59, seconds=59),
                     max_value=dt.timedelta(hours=838, minutes=59, seconds=59)))
def test_time_is_signed_microseconds(delta: dt.timedelta) -> None:
    assert convert(Column("a", "time", scale=6), delta) == delta // dt.timedelta(microseconds=1)


@given(st.integers(0, 2**64 - 1))
def test_bigint_unsigned_wraps_like_a_java_long(value: int) -> None:
    out = convert(Column("a", "bigint", unsigned=True), value)
    assert -(2**63) <= out < 2**63
    assert out % 2**64 == value


F32 = struct.Struct("<f")


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_float_is_the_shortest_decimal_of_the_same_32_bit_float(value: float) -> None:
    out = float32(value)
    assert F32.pack(out) == F32.pack(value)  # the same FLOAT, as Java's Float.toString
    digits = len(repr(out).replace("-", "").replace(".", "").split("e")[0].strip("0"))
    assert digits <= 9


def test_float_keeps_the_binlog_value_debezium_sends() -> None:
    binlog = F32.unpack(F32.pack(123456.7))[0]  # 123456.703125, as decoded from the binlog
    assert float32(binlog) == 123456.7
    assert float32(123457.0) == 123457.0  # a SELECT's text protocol value stays as it is


@given(st.integers(1, 64), st.data())
def test_bits_are_little_endian_of_the_bit_value(length: int, data: st.DataObject) -> None:
    value = data.draw(st.integers(0, 2**length - 1))
    col = Column("a", "bit", length=length)
    binlog = format(value, f"0{length}b")
    select = value.to_bytes((length + 7) // 8, "big")
    expected: Any = bool(value) if length == 1 else value.to_bytes((length + 7) // 8, "little")
    assert convert(col, binlog) == convert(col, select) == expected
