"""The Avro writer converts the common column types in compiled code too (convert.rs): an
Avro record of ordinary values calls no Python converter, and its bytes are those of the
Python way (the column's converter, then the value written by its Avro type)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.events import EventEncoder, SourceInfo, TableEncoder
from connector.events import avro_writer as avro_writer_module
from connector.schema import Column, TableSchema
from connector.settings.model import AVRO_CONVERTER
from connector.settings.parse import parse_config
from tests.unit.test_compiled_conversions import (
    DATES,
    DATETIMES,
    DECIMALS,
    FLOAT_BITS,
    OTHER,
    TIMES,
    TYPICAL,
)
from tests.unit.test_native_avro import schema_id
from tests.unit.test_native_encoder import outcome

SOURCE = SourceInfo(ts_us=1_700_000_000_123_456, db="shop", table="t", server_id=1,
                    gtid=None, file="binlog.000002", pos=4711, row=0, thread=None, query=None)


def _not_called(value: Any) -> Any:
    raise AssertionError(f"the Python converter ran for {value!r}")


def _rows_with(change: Callable[[tuple[Any, ...]], tuple[Any, ...]]) -> Any:
    """avro_writer's AvroRows with each column's description changed by `change`."""
    real = avro_writer_module.AvroRows
    return mock.patch.object(avro_writer_module, "AvroRows",
                             lambda columns: real([change(c) for c in columns]))


def _guarded(column: tuple[Any, ...]) -> tuple[Any, ...]:
    """A compiled column whose Python converter raises if called."""
    return column if column[5] is None else (*column[:2], _not_called, *column[3:])


def _python(column: tuple[Any, ...]) -> tuple[Any, ...]:
    """The column without its compiled conversion: the Python converter runs."""
    return (*column[:5], None)


@functools.cache
def _encoder(column: Column, decimal: str, time: str, variant: str) -> TableEncoder:
    """The table of `column`, its Avro writer's columns `_guarded`, `_python` or as built."""
    config = parse_config({"name": "conn", "config": {
        "database.hostname": "h", "database.user": "u", "database.server.id": 5,
        "topic.prefix": "app", "bootstrap.servers": "b",
        "decimal.handling.mode": decimal, "time.precision.mode": time,
        "key.converter": AVRO_CONVERTER, "value.converter": AVRO_CONVERTER}})
    table = TableSchema("shop", "t", (Column("id", "int", nullable=False), column), ("id",))
    change = {"guarded": _guarded, "python": _python}.get(variant, lambda c: c)
    with _rows_with(change):
        return EventEncoder(config, schema_ids=schema_id).table(table)


def _encoders(column: Column, decimal: str,
              time: str) -> tuple[TableEncoder, TableEncoder, TableEncoder]:
    """The column's table guarded, without compiled conversions, and as built."""
    return (_encoder(column, decimal, time, "guarded"), _encoder(column, decimal, time, "python"),
            _encoder(column, decimal, time, "compiled"))


@pytest.mark.parametrize("nullable", [True, False])
def test_ordinary_values_of_each_compiled_type_reach_no_python_converter(
        nullable: bool) -> None:
    for column, decimal, time, samples in TYPICAL:
        column = dataclasses.replace(column, nullable=nullable)
        guarded, python, compiled = _encoders(column, decimal, time)
        for value in samples:
            if isinstance(value, float) and math.isnan(value):
                continue  # an Avro float's NaN is fastavro's to write (its payload bits)
            row = {"id": 1, "v": value}
            want = python.value("c", None, row, SOURCE, 5, None)
            assert compiled.value("c", None, row, SOURCE, 5, None) == want, (column, value)
            assert guarded.value("c", None, row, SOURCE, 5, None) == want, (column, value)
            assert list(guarded.records("c", [row, row], SOURCE, 5, None)) == \
                list(python.records("c", [row, row], SOURCE, 5, None)), (column, value)


def test_a_value_no_conversion_takes_goes_to_the_python_converter() -> None:
    guarded, _, _ = _encoders(Column("v", "bigint", unsigned=True), "precise",
                              "adaptive_time_microseconds")
    with pytest.raises(AssertionError, match="the Python converter ran for 'x'"):
        guarded.value("c", None, {"id": 1, "v": "x"}, SOURCE, 5, None)


VALUES = OTHER | DECIMALS | DATES | DATETIMES | TIMES | FLOAT_BITS | st.floats(width=32) \
    | st.integers(-(2**70), 2**70) | st.text("01", max_size=66) | st.binary(max_size=9) \
    | st.sets(st.sampled_from(("a", "b,c", "é", "", "x"))) | st.just(float("nan"))


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(TYPICAL), st.booleans(), VALUES)
def test_avro_bytes_of_any_value_are_those_of_the_python_converter(
        typical: tuple[Column, str, str, list[Any]], nullable: bool, value: Any) -> None:
    """Compiled or not, the same record, or the same error (NaN and odd values included)."""
    column, decimal, time, _ = typical
    _, python, compiled = _encoders(dataclasses.replace(column, nullable=nullable),
                                    decimal, time)
    row = {"id": 1, "v": value}
    assert outcome(lambda: compiled.value("c", None, row, SOURCE, 5, None)) == \
        outcome(lambda: python.value("c", None, row, SOURCE, 5, None))
