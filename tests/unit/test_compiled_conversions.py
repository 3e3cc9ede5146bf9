"""Each compiled conversion writes what its Python converter's value writes, byte for byte.

One column per test, written by the compiled writer twice: with the conversion (compiled)
and without it (its Python converter, values.py, then the generic writing). Inputs as the
binlog decodes them and as a SELECT (pymysql) returns them, at their edges, plus values of
types no conversion expects (those go to the Python converter, and fail as it does).
"""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from connector.compiled import RowWriter
from connector.events import EventEncoder
from connector.events.converters import dumps
from connector.events.types import FieldMapping, field_mapping
from connector.schema import Column, TableSchema
from connector.settings.parse import parse_config
from tests.unit.test_native_encoder import outcome

MEMBERS = ("a", "b,c", "é", "")
ZONES = st.integers(-1439, 1439).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))
DATETIMES = st.datetimes() | st.datetimes(timezones=ZONES)
OTHER = st.none() | st.integers() | st.floats() | st.text() | st.binary() | \
    st.decimals() | st.dates() | st.datetimes() | st.timedeltas() | st.booleans()
# Decimals of every exponent form: the library's and pymysql's (digits with `scale` places),
# exponents (1E+5, 0E-9), more fraction digits than the column, negative zero.
DECIMALS = st.builds(lambda sign, digits, exp: Decimal((sign, tuple(digits), exp)),
                     st.integers(0, 1), st.lists(st.integers(0, 9), min_size=1, max_size=70),
                     st.integers(-40, 12)) | st.decimals() | st.decimals(places=2)
DATES = st.dates() | st.datetimes() | st.sampled_from(["0000-00-00", "2024-02-30"])
TIMES = st.timedeltas() | st.timedeltas(-dt.timedelta(hours=838, minutes=59, seconds=59),
                                        dt.timedelta(hours=838, minutes=59, seconds=59))


def writers(mapping: FieldMapping) -> tuple[RowWriter, RowWriter]:
    """The column written with its compiled conversion, and with its Python converter."""
    assert mapping.compiled is not None
    return (RowWriter([("v", mapping.convert, mapping.fallback, mapping.compiled)], dumps),
            RowWriter([("v", mapping.convert, mapping.fallback, None)], dumps))


def check(column: Column, value: Any, kind: str, decimal: str = "precise",
          time: str = "adaptive_time_microseconds") -> None:
    mapping = field_mapping(column, decimal, time)
    assert mapping.compiled is not None and mapping.compiled[0] == kind
    compiled, python = writers(mapping)
    assert outcome(lambda: compiled.row({"v": value})) == \
        outcome(lambda: python.row({"v": value}))


SETTINGS = settings(max_examples=300, deadline=None)


@SETTINGS
@given(st.booleans(), st.integers(0, 2**64 - 1) | st.integers(-(2**70), 2**70) | OTHER)
def test_bigint_unsigned_wraps_as_a_java_long(nullable: bool, value: Any) -> None:
    check(Column("v", "bigint", nullable=nullable, unsigned=True), value, "bigint_unsigned")


@SETTINGS
@given(st.booleans(), st.integers(-128, 127) | st.integers() | OTHER)
def test_boolean_is_the_ints_truth(nullable: bool, value: Any) -> None:
    check(Column("v", "boolean", nullable=nullable), value, "bool")


@SETTINGS
@given(st.booleans(), st.text("01", max_size=2) | st.binary(max_size=1) | st.integers(0, 1)
       | st.sampled_from([" 1", "0b1", "1_0", "2", "-1"]) | OTHER)
def test_bit_one_from_binlog_text_and_select_bytes(nullable: bool, value: Any) -> None:
    check(Column("v", "bit", nullable=nullable, length=1), value, "bit_bool")


@SETTINGS
@given(st.booleans(), st.sampled_from([2, 8, 12, 64]),
       st.text("01", max_size=66) | st.binary(max_size=9) | st.integers(0, 2**66)
       | st.sampled_from(["", " 1", "0b1", "2"]) | OTHER)
def test_bits_little_endian_from_binlog_text_and_select_bytes(nullable: bool, length: int,
                                                              value: Any) -> None:
    check(Column("v", "bit", nullable=nullable, length=length), value, "bits")


@SETTINGS
@given(st.booleans(), st.integers(1901, 2155) | st.just(1900) | st.just(0) | OTHER)
def test_year_zero_from_the_library_1900(nullable: bool, value: Any) -> None:
    check(Column("v", "year", nullable=nullable), value, "year")


@SETTINGS
@given(st.booleans(), st.sampled_from([(10, 0), (12, 2), (38, 10), (65, 30), (65, 0)]),
       DECIMALS | OTHER)
def test_decimal_precise_is_the_unscaled_twos_complement(
        nullable: bool, shape: tuple[int, int], value: Any) -> None:
    column = Column("v", "decimal", nullable=nullable, precision=shape[0], scale=shape[1])
    check(column, value, "decimal_precise")


@SETTINGS
@given(st.booleans(), st.sampled_from([(10, 0), (12, 2), (65, 30)]), DECIMALS | OTHER)
def test_decimal_string_keeps_scale_and_sign(nullable: bool, shape: tuple[int, int],
                                             value: Any) -> None:
    column = Column("v", "decimal", nullable=nullable, precision=shape[0], scale=shape[1])
    check(column, value, "decimal_string", decimal="string")


@SETTINGS
@given(st.booleans(), DECIMALS | OTHER)
def test_decimal_double_is_the_nearest_double(nullable: bool, value: Any) -> None:
    column = Column("v", "decimal", nullable=nullable, precision=65, scale=30)
    check(column, value, "decimal_double", decimal="double")


@SETTINGS
@given(st.booleans(), st.floats() | st.floats(width=32) | st.sampled_from(
    [1e16, 1e15, 123456789012345678.0, 1e-4, 1e-5, 0.1, -0.0, 5e-324, 1.7976931348623157e308])
    | OTHER)
def test_double_is_pythons_repr(nullable: bool, value: Any) -> None:
    check(Column("v", "double", nullable=nullable), value, "double")


FLOAT_BITS = st.integers(0, 2**32 - 1).map(lambda bits: struct.unpack("<f", struct.pack(
    "<I", bits))[0])


@settings(max_examples=2000, deadline=None)
@given(st.booleans(), FLOAT_BITS | st.floats(width=32) | st.floats() | st.sampled_from(
    [3.0e10, 5.6e11, 123456.7, 1e-45, 3.4028235e38, 3.5e38, 1e-3, 1e7, 9999999.0]) | OTHER)
def test_float_is_javas_float_to_string(nullable: bool, value: Any) -> None:
    check(Column("v", "float", nullable=nullable), value, "float32")


@SETTINGS
@given(st.booleans(), FLOAT_BITS | st.floats() | st.sampled_from([3.5e38, 3.4028235e38, 0.1])
       | OTHER)
def test_float_m_d_is_the_32_bit_value_widened(nullable: bool, value: Any) -> None:
    check(Column("v", "float", nullable=nullable, precision=7, scale=2), value,
          "float32_widened")


@SETTINGS
@given(st.booleans(), st.sampled_from(["adaptive_time_microseconds", "connect"]),
       DATES | OTHER)
def test_date_days_since_the_epoch(nullable: bool, time: str, value: Any) -> None:
    check(Column("v", "date", nullable=nullable), value, "date_days", time=time)


@SETTINGS
@given(st.booleans(), st.sampled_from([("adaptive_time_microseconds", "time_micros"),
                                       ("connect", "time_millis")]),
       TIMES | st.just("00:00:00") | OTHER)
def test_time_micros_and_millis_of_negative_and_long_times(
        nullable: bool, mode: tuple[str, str], value: Any) -> None:
    check(Column("v", "time", nullable=nullable, scale=6), value, mode[1], time=mode[0])


@SETTINGS
@given(st.booleans(), st.sampled_from([(0, "adaptive_time_microseconds", "epoch_millis"),
                                       (3, "adaptive_time_microseconds", "epoch_millis"),
                                       (6, "adaptive_time_microseconds", "epoch_micros"),
                                       (6, "connect", "epoch_millis")]),
       DATETIMES | st.just("0000-00-00 00:00:00") | OTHER)
def test_epoch_millis_and_micros(nullable: bool, mode: tuple[int, str, str],
                                 value: Any) -> None:
    column = Column("v", "datetime", nullable=nullable, scale=mode[0])
    check(column, value, mode[2], time=mode[1])


@SETTINGS
@given(st.booleans(), st.integers(0, 6),
       DATETIMES | st.just(dt.datetime(1970, 1, 1)) | st.just("0000-00-00 00:00:00")
       | st.just(dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) | OTHER)
def test_zoned_timestamp_text(nullable: bool, fsp: int, value: Any) -> None:
    check(Column("v", "timestamp", nullable=nullable, scale=fsp), value, "zoned")


@SETTINGS
@given(st.booleans(), st.sampled_from(["varchar", "text", "enum"]),
       st.text() | st.text().map(lambda s: s.encode("utf-8", "surrogatepass"))
       | st.binary() | OTHER)
def test_string_from_text_and_bytes(nullable: bool, type_name: str, value: Any) -> None:
    column = Column("v", type_name, nullable=nullable, length=10, charset="utf8mb4",
                    values=MEMBERS if type_name == "enum" else ())
    check(column, value, "string")


@SETTINGS
@given(st.booleans(), st.sampled_from([("binary", 4), ("varbinary", 4), ("blob", None)]),
       st.binary(max_size=6) | st.text(st.characters(max_codepoint=255)) | st.just("")
       | OTHER)
def test_binary_padded_and_from_latin1_text(nullable: bool, shape: tuple[str, int | None],
                                            value: Any) -> None:
    check(Column("v", shape[0], nullable=nullable, length=shape[1]), value, "binary")


@SETTINGS
@given(st.booleans(), st.sets(st.sampled_from(MEMBERS + ("x",)))
       | st.frozensets(st.sampled_from(MEMBERS)) | st.sampled_from(MEMBERS) | OTHER)
def test_set_members_in_definition_order(nullable: bool, value: Any) -> None:
    check(Column("v", "set", nullable=nullable, values=MEMBERS), value, "enum_set")


TYPICAL: list[tuple[Column, str, str, list[Any]]] = [  # binlog's and SELECT's values
    (Column("v", "bigint", unsigned=True), "precise", "adaptive_time_microseconds",
     [0, 2**63, 2**64 - 1]),
    (Column("v", "boolean"), "precise", "adaptive_time_microseconds", [0, 1, -128]),
    (Column("v", "bit", length=1), "precise", "adaptive_time_microseconds",
     ["0", "1", "", b"\x01", b"\x00"]),
    (Column("v", "bit", length=12), "precise", "adaptive_time_microseconds",
     ["000000000001", "100000000000", b"\x0f\xff", b"", 5]),
    (Column("v", "year"), "precise", "adaptive_time_microseconds", [1900, 2024]),
    (Column("v", "decimal", precision=12, scale=2), "precise", "adaptive_time_microseconds",
     [Decimal("-0.00"), Decimal("12.345"), Decimal("1E+5"), Decimal("-128.00")]),
    (Column("v", "decimal", precision=65, scale=30), "string", "adaptive_time_microseconds",
     [Decimal("-0.0000001"), Decimal("99999.5E-40"), Decimal("1" * 35 + "." + "9" * 30)]),
    (Column("v", "decimal", precision=12, scale=2), "double", "adaptive_time_microseconds",
     [Decimal("0.10"), Decimal("-0"), Decimal("1E+20")]),
    (Column("v", "double"), "precise", "adaptive_time_microseconds", [0.1, -0.0, 1e16]),
    (Column("v", "float"), "precise", "adaptive_time_microseconds",
     [3.0000000054977558e10, 123456.703125, 1.401298464324817e-45, float("nan")]),
    (Column("v", "float", precision=7, scale=2), "precise", "adaptive_time_microseconds",
     [0.1, 123456.7, -0.0]),
    (Column("v", "date"), "precise", "adaptive_time_microseconds",
     [dt.date(1, 1, 1), dt.date(9999, 12, 31), "0000-00-00"]),
    (Column("v", "time", scale=6), "precise", "adaptive_time_microseconds",
     [-dt.timedelta(hours=838, microseconds=1), dt.timedelta(0)]),
    (Column("v", "time", scale=6), "precise", "connect", [-dt.timedelta(microseconds=1)]),
    (Column("v", "datetime", scale=6), "precise", "adaptive_time_microseconds",
     [dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999)]),
    (Column("v", "datetime", scale=3), "precise", "adaptive_time_microseconds",
     [dt.datetime(1969, 12, 31, 23, 59, 59, 999999), "0000-00-00 00:00:00"]),
    (Column("v", "timestamp", scale=3), "precise", "adaptive_time_microseconds",
     [dt.datetime(1970, 1, 1), dt.datetime(2038, 1, 19, 3, 14, 7, 999999)]),
    (Column("v", "varchar", length=9), "precise", "adaptive_time_microseconds",
     ["é\"\\\x01", "é".encode()]),
    (Column("v", "binary", length=4), "precise", "adaptive_time_microseconds",
     [b"\x00\xff", "", "ÿ"]),
    (Column("v", "set", values=MEMBERS), "precise", "adaptive_time_microseconds",
     [{"é", "a", "x"}, set(), "a,é"]),
]


def _not_called(value: Any) -> Any:
    raise AssertionError(f"the Python converter ran for {value!r}")


def test_the_decoded_values_of_each_type_do_not_reach_python() -> None:
    for column, decimal, time, samples in TYPICAL:
        mapping = field_mapping(column, decimal, time)
        compiled, python = writers(mapping)
        guarded = RowWriter([("v", _not_called, mapping.fallback, mapping.compiled)], dumps)
        for value in samples:
            assert guarded.row({"v": value}) == python.row({"v": value}) == \
                compiled.row({"v": value}), (column, value)


def test_a_wrapped_converter_goes_the_python_way() -> None:
    table = TableSchema("shop", "t", (
        Column("id", "int", nullable=False), Column("masked", "varchar", length=30),
        Column("cut", "varchar", length=30), Column("hashed", "varchar", length=30),
        Column("masked_int", "bigint", unsigned=True)), ("id",))
    config = parse_config({"name": "conn", "config": {
        "database.hostname": "h", "database.user": "u", "database.server.id": 5,
        "topic.prefix": "app", "bootstrap.servers": "b",
        "column.mask.with.5.chars": "shop.t.masked,shop.t.masked_int",
        "column.truncate.to.3.chars": "shop.t.cut",
        "column.mask.hash.SHA-256.with.salt.s": "shop.t.hashed"}})
    enc = EventEncoder(config).table(table)
    compiled = {name: kind for name, _, _, _, kind in enc.writer_columns[0]}
    assert compiled["masked"] is None and compiled["cut"] is None
    assert compiled["hashed"] is None
    # a mask on a number keeps its converter, so its compiled conversion too
    assert compiled["masked_int"] == ("bigint_unsigned", -1, ())
    after = enc.decode_value(enc.value("c", None, {
        "id": 1, "masked": "secret", "cut": "abcdef", "hashed": "x", "masked_int": 2**64 - 1},
        _source(), 0))["after"]
    assert after["masked"] == "*****" and after["cut"] == "abc"
    assert after["hashed"] not in ("x", None) and after["masked_int"] == -1


def _source() -> Any:
    from connector.events import SourceInfo
    return SourceInfo(ts_us=0, db="shop", table="t", server_id=1, gtid=None, file="f",
                      pos=4, row=0, thread=None, query=None)
