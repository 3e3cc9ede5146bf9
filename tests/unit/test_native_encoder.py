"""The compiled record writer gives byte for byte the records of the Python reference.

Random rows of every column type at its edges, as the binlog or a SELECT decodes them (the
values the compiled conversions take, and values of other types, which go to the Python
converters),
under every setting that changes how a value is written: flavour, converters with and
without schemas, decimal.handling.mode, time.precision.mode, replace.null.with.default,
column masks and truncation. Both the per-record calls and the batch of a rows event.
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib
import struct
import sys
from decimal import Decimal
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from connector import compiled
from connector.events import EventEncoder, SourceInfo, TableEncoder, envelope
from connector.schema import Column, TableSchema
from connector.settings.parse import parse_config
from tests.reference_encoder import ReferenceEncoder

ENUM = ("a", "b,c", "é")
# A SELECT's Decimal (pymysql: Decimal(text)) in every exponent form, with more fraction
# digits than a column has, negative zero.
DECIMAL_FORMS = st.builds(lambda sign, digits, exp: Decimal((sign, tuple(digits), exp)),
                          st.integers(0, 1), st.lists(st.integers(0, 9), min_size=1,
                                                      max_size=12), st.integers(-14, 3))
COLUMNS: dict[Column, st.SearchStrategy[Any]] = {
    Column("id", "bigint", nullable=False): st.integers(-(2**63), 2**63 - 1),
    Column("code", "varchar", nullable=False, length=8, charset="utf8mb4"): st.text(max_size=8),
    Column("t_tiny", "tinyint"): st.integers(-128, 127),
    Column("t_tiny_u", "tinyint", unsigned=True): st.integers(0, 255),
    Column("t_small", "smallint"): st.integers(-(2**15), 2**15 - 1),
    Column("t_small_u", "smallint", unsigned=True): st.integers(0, 2**16 - 1),
    Column("t_medium", "mediumint"): st.integers(-(2**23), 2**23 - 1),
    Column("t_int", "int"): st.integers(-(2**31), 2**31 - 1),
    Column("t_int_u", "int", unsigned=True): st.integers(0, 2**32 - 1),
    Column("t_big_u", "bigint", unsigned=True): st.integers(-(2**63), 2**64 - 1),
    Column("t_bool", "boolean"): st.integers(-128, 127),
    Column("t_dec", "decimal", precision=12, scale=2):
        st.decimals(-(10**10) + 1, 10**10 - 1, places=2, allow_nan=False) | DECIMAL_FORMS,
    Column("t_dec_wide", "decimal", precision=65, scale=30):
        st.decimals(-(10**34), 10**34, places=30, allow_nan=False),
    Column("t_dec0", "decimal", precision=5, scale=0):
        st.decimals(-99999, 99999, places=0) | DECIMAL_FORMS | st.integers(),
    Column("t_float", "float"): st.floats(width=32),
    Column("t_float_md", "float", precision=7, scale=2): st.floats(width=32),
    Column("t_double", "double"): st.floats() | st.integers(-5, 5),
    Column("t_bit1", "bit", length=1): st.sampled_from(["0", "1", b"\x00", b"\x01"]),
    Column("t_bits", "bit", length=12): st.text("01", min_size=12, max_size=12),
    Column("t_char", "char", length=4, charset="utf8mb4"): st.text(max_size=4),
    Column("t_text", "text", charset="utf8mb4"): st.text(),
    Column("t_raw_text", "varchar", length=20, charset="latin1"): st.binary(max_size=20),
    Column("t_binary", "binary", length=4):
        st.binary(max_size=4) | st.text(st.characters(max_codepoint=255), max_size=4),
    Column("t_blob", "blob"): st.binary() | st.just(""),
    Column("t_date", "date"): st.dates() | st.just("0000-00-00"),
    Column("t_time", "time", scale=6):
        st.timedeltas(-dt.timedelta(hours=838, minutes=59, seconds=59),
                      dt.timedelta(hours=838, minutes=59, seconds=59)),
    Column("t_dt0", "datetime", scale=0): st.datetimes() | st.just("0000-00-00 00:00:00"),
    Column("t_dt6", "datetime", scale=6): st.datetimes(),
    Column("t_ts3", "timestamp", scale=3):
        st.datetimes(dt.datetime(1970, 1, 1), dt.datetime(2038, 1, 19))
        | st.datetimes(timezones=st.just(dt.UTC)) | st.just(dt.datetime(1970, 1, 1))
        | st.just("0000-00-00 00:00:00"),
    Column("t_year", "year"): st.integers(1901, 2155) | st.just(1900),
    Column("t_enum", "enum", values=ENUM): st.sampled_from(ENUM),
    Column("t_set", "set", values=ENUM):
        st.sets(st.sampled_from(ENUM)) | st.frozensets(st.sampled_from(ENUM)) | st.just("a"),
    Column("t_json", "json"): st.text() | st.binary().map(lambda b: b.hex().encode()),
    Column("t_vector", "vector"):
        st.lists(st.floats(width=32, allow_nan=False), max_size=4).map(
            lambda xs: struct.pack(f"<{len(xs)}f", *xs)),
    Column("t_geo", "geometry"): st.binary(min_size=4, max_size=40),
    Column("t_point", "point"): st.builds(
        lambda srid, x, y: struct.pack("<I", srid) + b"\x01\x01\x00\x00\x00"
        + struct.pack("<dd", x, y), st.integers(0, 2**32 - 1), st.floats(), st.floats()),
    Column('we"ird\\ñ\x01', "int", nullable=False, default="7"): st.integers(-5, 5),
    Column("t_default", "varchar", length=10, charset="utf8mb4", default="'dflt'"):
        st.text(max_size=10),
    Column("t_masked", "varchar", length=30, charset="utf8mb4"): st.text(max_size=30),
    Column("t_cut", "text", charset="utf8mb4"): st.text(),
}
TABLE = TableSchema("shop", "all", tuple(COLUMNS), ("id", "code"))
NO_KEY = TableSchema("shop", "nokey", tuple(list(COLUMNS)[:6]), ())
ROWS = st.fixed_dictionaries({c.name: st.none() | s for c, s in COLUMNS.items()})
SOURCES = st.builds(SourceInfo, ts_us=st.integers(0, 2**51), db=st.text(min_size=1),
                    table=st.none() | st.text(), server_id=st.integers(0, 2**32 - 1),
                    gtid=st.none() | st.text(), file=st.text(), pos=st.integers(0, 2**40),
                    row=st.integers(0, 10_000), thread=st.none() | st.integers(0, 2**40),
                    query=st.none() | st.text(),
                    snapshot=st.sampled_from(["false", "incremental", "true", "last"]))
SETTINGS = st.tuples(st.sampled_from(["mariadb", "mysql"]),
                     st.sampled_from(["precise", "string", "double"]),
                     st.sampled_from(["adaptive_time_microseconds", "connect"]),
                     st.booleans(), st.booleans(), st.booleans(), st.booleans())


@functools.cache
def encoders(flavour: str, decimal: str, time: str, key_schemas: bool, value_schemas: bool,
             replace_null: bool, mappers: bool, table: TableSchema = TABLE
             ) -> tuple[TableEncoder, ReferenceEncoder]:
    mapper_keys = {"column.mask.with.5.chars": "shop.all.t_masked",
                   "column.truncate.to.3.chars": "shop.all.t_cut,shop.all.t_blob"}
    config = parse_config({"name": "conn", "config": {
        "database.hostname": "h", "database.user": "u", "database.server.id": 5,
        "topic.prefix": "app", "bootstrap.servers": "b",
        "decimal.handling.mode": decimal, "time.precision.mode": time,
        "key.converter.schemas.enable": str(key_schemas).lower(),
        "value.converter.schemas.enable": str(value_schemas).lower(),
        "value.converter.replace.null.with.default": str(replace_null).lower(),
        "key.converter.replace.null.with.default": str(replace_null).lower(),
        **(mapper_keys if mappers else {})}}).with_server_flavour(flavour)
    enc = EventEncoder(config).table(table)
    return enc, ReferenceEncoder(config, enc)


def outcome(call: Any) -> Any:
    """The call's result, or the type of what it raised (both writers must agree)."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - compared, not swallowed
        return type(exc)


@settings(max_examples=400, deadline=None)
@given(SETTINGS, ROWS, ROWS, SOURCES, st.sampled_from(["c", "u", "d", "r", "t"]),
       st.none() | st.fixed_dictionaries({"id": st.text(), "total_order": st.integers(1, 2**40),
                                          "data_collection_order": st.integers(1, 2**40)}),
       st.integers(0, 2**41), st.booleans())
def test_record_bytes_equal_the_python_reference(
        setting: tuple[Any, ...], before: dict[str, Any], after: dict[str, Any],
        source: SourceInfo, op: str, tx: dict[str, Any] | None, ts_ms: int,
        keyless: bool) -> None:
    enc, ref = encoders(*setting, table=NO_KEY if keyless else TABLE)
    b = None if op in ("c", "r", "t") else before
    a = None if op in ("d", "t") else after
    assert outcome(lambda: enc.value(op, b, a, source, ts_ms, tx)) == \
        outcome(lambda: ref.value(op, b, a, source, ts_ms, tx))
    assert outcome(lambda: enc.key(after)) == outcome(lambda: ref.key(after))


def check_batch(enc: TableEncoder, ref: Any, rows: list[dict[str, Any]], source: SourceInfo,
                op: str, tx: tuple[str, int, int] | None, ts_ms: int) -> None:
    """`enc.records` of a rows event (written two records at a time) equals `ref`'s key and
    value per row, or fails as its first row that `ref` cannot write."""
    batch: list[Any] = [(r, r) for r in rows] if op == "u" else rows
    expected = []
    for index, row in enumerate(batch):
        source.row = index
        before, after = (None, row) if op in ("c", "r") else (row, None) if op == "d" else row
        meta = None if tx is None else {"id": tx[0], "total_order": tx[1] + index + 1,
                                        "data_collection_order": tx[2] + index + 1}
        key_row = after if after is not None else before
        expected.append(outcome(lambda k=key_row, b=before, a=after, m=meta: (
            ref.key(k), ref.value(op, b, a, source, ts_ms, m))))
    with mock.patch.object(envelope, "RECORDS_AT_ONCE", 2):  # events written in parts too
        got = outcome(lambda: list(enc.records(op, batch, source, ts_ms, tx)))
    errors = [e for e in expected if isinstance(e, type)]
    if errors:  # a row no writer can encode: the batch fails as its first such row did
        assert got == errors[0]
    else:
        assert got == expected


@settings(max_examples=150, deadline=None)
@given(SETTINGS, st.lists(ROWS, max_size=5), SOURCES, st.sampled_from(["c", "u", "d", "r"]),
       st.none() | st.tuples(st.text(), st.integers(0, 2**40), st.integers(0, 2**40)),
       st.integers(0, 2**41))
def test_batch_records_equal_the_python_reference_per_row(
        setting: tuple[Any, ...], rows: list[dict[str, Any]], source: SourceInfo, op: str,
        tx: tuple[str, int, int] | None, ts_ms: int) -> None:
    check_batch(*encoders(*setting), rows, source, op, tx, ts_ms)


@settings(max_examples=100, deadline=None)
@given(SETTINGS, ROWS, SOURCES, st.integers(0, 2**41))
def test_snapshot_framing_around_a_read_row_is_the_r_record(
        setting: tuple[Any, ...], row: dict[str, Any], source: SourceInfo, ts_ms: int) -> None:
    enc, ref = encoders(*setting)
    source.row = 0
    expected = outcome(lambda: (ref.key(row), ref.value("r", None, row, source, ts_ms, None)))
    if isinstance(expected, type):
        return
    key, after = enc.read_row(row)
    head, tail = enc.read_framing(source, ts_ms)
    assert (key, head + after + tail) == expected


def test_a_checkout_without_the_built_module_says_to_run_make_native() -> None:
    with mock.patch.dict(sys.modules, {"connector._native": None}):
        try:
            importlib.reload(compiled)
        except ImportError as exc:
            message = str(exc)
        else:
            raise AssertionError("imported without the module")
    importlib.reload(compiled)
    assert "run `make native`" in message and "\n" not in message
