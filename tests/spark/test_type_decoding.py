"""Connector encode -> Spark decode gives back the source value, for every Debezium type.

Records come from the connector's `EventEncoder` (the bytes `gtidmark run` writes); the job's
`Decoder` and its columnar `RangeDecoder` and `ArrowRangeDecoder` are pure, so the properties
run without Spark (test_apply checks the Spark side).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from connector.schema import Column, TableSchema
from spark_consumer.decoding.arrowjson import ArrowRangeDecoder
from spark_consumer.decoding.columnar import OP_COLUMN, RangeDecoder
from spark_consumer.decoding.dbztypes import decode_decimal
from spark_consumer.decoding.decode import BadRecord, Change, Decoder
from tests.spark.events import Changes

UTC = dt.UTC
ENUM = ("small", "medium", "large")
SET = ("a", "b", "c", "d")
EPOCH_DAY = dt.date(1970, 1, 1)


def signed_range(nbytes: int) -> tuple[int, int]:
    return -(1 << (8 * nbytes - 1)), (1 << (8 * nbytes - 1)) - 1


@st.composite
def unscaled_decimals(draw: st.DrawFn) -> tuple[int, int, int]:
    """(unscaled, precision, scale) whose unscaled value needs 1-16 bytes, negative included."""
    nbytes = draw(st.integers(1, 16))
    low, high = signed_range(nbytes)
    unscaled = draw(st.integers(low, high))
    scale = draw(st.integers(0, 30))
    digits = len(str(abs(unscaled)))
    precision = draw(st.integers(max(digits, scale, 1), 65))
    return unscaled, precision, scale


def fsp_datetime(fsp: int, low: dt.datetime, high: dt.datetime) -> st.SearchStrategy[dt.datetime]:
    step = 10 ** (6 - fsp)
    return st.datetimes(low, high).map(
        lambda v: v.replace(microsecond=v.microsecond // step * step))


def all_types_schema(precision: int, scale: int, dt_fsp: int, ts_fsp: int,
                     bits: int) -> TableSchema:
    """One column per MariaDB type family, as the connector's schema reader describes it."""
    columns = (
        Column("id", "int", nullable=False),
        Column("i8", "tinyint"), Column("i16", "smallint"), Column("i24", "mediumint"),
        Column("u32", "int", unsigned=True), Column("i64", "bigint"),
        Column("u64", "bigint", unsigned=True),
        Column("dec", "decimal", precision=precision, scale=scale),
        Column("f32", "float"), Column("f64", "double"),
        Column("flag", "bit", length=1), Column("bits", "bit", length=bits),
        Column("txt", "varchar", length=50, charset="utf8mb4"),
        Column("bin", "binary", length=6), Column("blob", "blob"),
        Column("day", "date"), Column("tod", "time", scale=6),
        Column("dtm", "datetime", scale=dt_fsp), Column("ts", "timestamp", scale=ts_fsp),
        Column("yr", "year"), Column("size", "enum", values=ENUM),
        Column("tags", "set", values=SET), Column("doc", "json"),
    )
    return TableSchema("shop", "all_types", columns, ("id",))


@st.composite
def rows(draw: st.DrawFn) -> tuple[TableSchema, dict[str, Any]]:
    """A table with one column per type family and one row of source values for it."""
    unscaled, precision, scale = draw(unscaled_decimals())
    dt_fsp, ts_fsp, bits = draw(st.integers(0, 6)), draw(st.integers(0, 6)), draw(
        st.integers(2, 64))
    schema = all_types_schema(precision, scale, dt_fsp, ts_fsp, bits)
    columns = schema.columns
    i64 = st.integers(*signed_range(8))
    row = {
        "id": draw(st.integers(*signed_range(4))),
        "i8": draw(st.integers(-128, 127)), "i16": draw(st.integers(*signed_range(2))),
        "i24": draw(st.integers(-(1 << 23), (1 << 23) - 1)),
        "u32": draw(st.integers(0, (1 << 32) - 1)), "i64": draw(i64),
        "u64": draw(st.integers(0, (1 << 64) - 1)),
        "dec": Decimal(unscaled).scaleb(-scale),
        # Values a FLOAT holds exactly with at most 6 significant digits.
        "f32": draw(st.integers(-999, 999)) / (1 << draw(st.integers(0, 4))),
        "f64": draw(st.floats(allow_nan=False, allow_infinity=False)),
        "flag": draw(st.integers(0, 1)), "bits": draw(st.integers(0, (1 << bits) - 1)),
        "txt": draw(st.text(max_size=20)),
        "bin": draw(st.binary(min_size=6, max_size=6)), "blob": draw(st.binary(max_size=40)),
        "day": draw(st.dates(dt.date(1000, 1, 1), dt.date(9999, 12, 31))),
        "tod": draw(st.timedeltas(-dt.timedelta(hours=838, minutes=59, seconds=59),
                                  dt.timedelta(hours=838, minutes=59, seconds=59))),
        "dtm": draw(fsp_datetime(dt_fsp, dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31))),
        "ts": draw(fsp_datetime(ts_fsp, dt.datetime(1970, 1, 2), dt.datetime(2038, 1, 1))),
        "yr": draw(st.sampled_from([0, *range(1901, 2156)])),
        "size": draw(st.sampled_from(ENUM)),
        "tags": draw(st.frozensets(st.sampled_from(SET))),
        "doc": draw(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5),
                                    max_size=4)),
    }
    nulls = draw(st.sets(st.sampled_from([c.name for c in columns if c.nullable])))
    return schema, {k: None if k in nulls else v for k, v in row.items()}


def micros(value: dt.timedelta) -> int:
    return value // dt.timedelta(microseconds=1)


def expected(schema: TableSchema, row: dict[str, Any]) -> dict[str, Any]:
    """The source row as the Spark column values the job must store (NULL stays NULL)."""
    precision = schema.column("dec").precision or 0
    bit_bytes = ((schema.column("bits").length or 0) + 7) // 8

    def same(value: Any) -> Any:
        return value

    def utc(value: dt.datetime) -> dt.datetime:
        return value.replace(tzinfo=UTC)

    conversions: dict[str, Callable[[Any], Any]] = {
        # BIGINT UNSIGNED is int64 on the wire (Debezium's long mode): two's complement.
        "u64": lambda v: v - (1 << 64) if v >= 1 << 63 else v,
        "dec": lambda v: v if precision <= 38 else format(v, "f"),
        "flag": bool, "bits": lambda v: v.to_bytes(bit_bytes, "little"), "tod": micros,
        "dtm": utc, "ts": utc, "tags": lambda v: ",".join(m for m in SET if m in v),
    }
    return {k: None if v is None else conversions.get(k, same)(v) for k, v in row.items()}


def decoded(item: tuple[bytes | None, bytes | None], topic: str) -> dict[str, Any]:
    change = Decoder().decode(topic, 0, 0, *item)
    assert isinstance(change, Change), change
    return with_doc(change.row)


def decoded_columnar(item: tuple[bytes | None, bytes | None], topic: str,
                     decoder: type[RangeDecoder | ArrowRangeDecoder]) -> dict[str, Any]:
    """The one change of a range decoded by a columnar path, as Python values."""
    (table,) = decoder(topic).decode([(topic, 0, 0, *item)]).tables
    (row,) = table.to_pylist()
    assert row.pop(OP_COLUMN) == "c"
    return with_doc(row)


def with_doc(values: dict[str, Any]) -> dict[str, Any]:
    row = dict(values)
    if row["doc"] is not None:
        row["doc"] = json.loads(row["doc"])
    return row


@settings(max_examples=300, deadline=None)
@given(rows())
def test_every_debezium_type_decodes_to_the_source_value(
        case: tuple[TableSchema, dict[str, Any]]) -> None:
    schema, row = case
    changes = Changes(schema, "app")
    assert decoded(changes.upsert("c", row), changes.topic) == expected(schema, row)


@pytest.mark.parametrize("decoder", [RangeDecoder, ArrowRangeDecoder])
@settings(max_examples=300, deadline=None)
@given(case=rows())
def test_every_debezium_type_decodes_columnar_to_the_source_value(
        decoder: type[RangeDecoder | ArrowRangeDecoder],
        case: tuple[TableSchema, dict[str, Any]]) -> None:
    schema, row = case
    changes = Changes(schema, "app")
    assert decoded_columnar(changes.upsert("c", row), changes.topic, decoder) == \
        expected(schema, row)


@settings(max_examples=200, deadline=None)
@given(unscaled_decimals())
@example((-2929356, 10, 2))  # its bytes are base64 "0000": also a numeric-looking string
@example((0, 1, 0))
@example((signed_range(16)[0], 39, 0))
def test_negative_and_wide_decimals_decode_exactly(case: tuple[int, int, int]) -> None:
    unscaled, precision, scale = case
    schema = TableSchema("shop", "money", (
        Column("id", "int", nullable=False),
        Column("amount", "decimal", precision=precision, scale=scale)), ("id",))
    changes = Changes(schema, "app")
    value = Decimal(unscaled).scaleb(-scale)
    record = changes.upsert("c", {"id": 1, "amount": value})
    change = Decoder().decode(changes.topic, 0, 0, *record)
    assert isinstance(change, Change)
    # Spark decimals hold 38 digits; wider DECIMALs are kept exactly as text.
    want = value if precision <= 38 else format(value, "f")
    assert change.row["amount"] == want
    for decoder in (RangeDecoder, ArrowRangeDecoder):
        (columnar,) = decoder(changes.topic).decode([(changes.topic, 0, 0, *record)]).tables
        assert columnar.column("amount").to_pylist() == [want]


def test_the_base64_text_0000_is_a_negative_decimal_not_zero() -> None:
    schema = TableSchema("shop", "money", (
        Column("id", "int", nullable=False),
        Column("amount", "decimal", precision=10, scale=2)), ("id",))
    changes = Changes(schema, "app")
    key, value = changes.upsert("c", {"id": 1, "amount": Decimal("-29293.56")})
    assert value is not None
    assert json.loads(value)["payload"]["after"]["amount"] == "0000"
    change = Decoder().decode(changes.topic, 0, 0, key, value)
    assert isinstance(change, Change)
    assert change.row["amount"] == Decimal("-29293.56")


@given(st.decimals(min_value=-10**12, max_value=10**12, places=4, allow_nan=False))
def test_decimal_handling_modes_string_and_double_decode_by_their_schema(number: Decimal) -> None:
    schema = TableSchema("shop", "money", (
        Column("id", "int", nullable=False),
        Column("amount", "decimal", precision=20, scale=4)), ("id",))
    for mode, check in (("string", lambda v: Decimal(v) == number),
                        ("double", lambda v: v == float(number))):
        changes = Changes(schema, "app", config={"decimal.handling.mode": mode})
        change = Decoder().decode(changes.topic, 0, 0, *changes.upsert(
            "c", {"id": 1, "amount": number}))
        assert isinstance(change, Change)
        assert check(change.row["amount"]), (mode, change.row)


def test_connect_time_precision_mode_decodes_to_the_source_values() -> None:
    schema = TableSchema("shop", "times", (
        Column("id", "int", nullable=False), Column("day", "date"),
        Column("tod", "time", scale=3), Column("dtm", "datetime", scale=3)), ("id",))
    changes = Changes(schema, "app", config={"time.precision.mode": "connect"})
    at = dt.datetime(1969, 7, 20, 20, 17, 40, 123000)
    change = Decoder().decode(changes.topic, 0, 0, *changes.upsert("c", {
        "id": 1, "day": dt.date(1969, 7, 20), "tod": dt.timedelta(hours=20, milliseconds=5),
        "dtm": at}))
    assert isinstance(change, Change)
    assert change.row == {"id": 1, "day": dt.date(1969, 7, 20), "tod": 72_000_005,
                          "dtm": at.replace(tzinfo=UTC)}


def test_geometry_keeps_wkb_and_srid() -> None:
    schema = TableSchema("shop", "places", (
        Column("id", "int", nullable=False), Column("pos", "geometry")), ("id",))
    changes = Changes(schema, "app")
    wkb = bytes.fromhex("0101000000000000000000f03f0000000000000040")
    change = Decoder().decode(changes.topic, 0, 0, *changes.upsert(
        "c", {"id": 1, "pos": (4326).to_bytes(4, "little") + wkb}))
    assert isinstance(change, Change)
    pos = json.loads(change.row["pos"])
    assert (base64.b64decode(pos["wkb"]), pos["srid"]) == (wkb, 4326)


def money_record(mutate: Any) -> tuple[bytes | None, bytes]:
    """A connector record of a DECIMAL(10,2) column, its JSON document changed by `mutate`."""
    schema = TableSchema("shop", "money", (
        Column("id", "int", nullable=False),
        Column("amount", "decimal", precision=10, scale=2)), ("id",))
    key, value = Changes(schema, "app").upsert("c", {"id": 1, "amount": Decimal("1.00")})
    assert value is not None
    doc = json.loads(value)
    mutate(doc["schema"]["fields"][1]["fields"][1], doc["payload"]["after"])
    return key, json.dumps(doc).encode()


@given(st.sampled_from(["abc", "", "2.5", "-1", "99999"]))
def test_a_malformed_decimal_scale_is_a_bad_record_not_a_failure(scale: str) -> None:
    key, value = money_record(lambda field, _: field["parameters"].update(scale=scale))
    record = Decoder().decode("app.shop.money", 0, 7, key, value)
    assert isinstance(record, BadRecord), record
    assert "scale" in record.reason


@given(st.sampled_from(["1.5", "zz=", "", "AQ", "not base64!"]) | st.integers() | st.floats())
def test_an_undecodable_decimal_value_is_a_bad_record(amount: Any) -> None:
    key, value = money_record(lambda _, after: after.update(amount=amount))
    record = Decoder().decode("app.shop.money", 0, 7, key, value)
    assert isinstance(record, BadRecord), record
    assert record.reason.startswith("column amount:")


def test_decode_decimal_reads_big_endian_twos_complement() -> None:
    assert decode_decimal(base64.b64encode(b"\xff").decode(), 2) == Decimal("-0.01")
    assert decode_decimal(base64.b64encode(b"\x00\xff").decode(), 0) == Decimal(255)
