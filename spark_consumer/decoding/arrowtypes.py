"""Spark column types as Arrow types, and one column of JSON values converted to Arrow at once.

`column` gives, for every value, exactly what `ColumnSpec.convert` gives row by row, or
raises `Unsupported` (the caller then decodes the range row by row, which decides).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from spark_consumer.decoding.dbztypes import (
    BYTES_B64,
    DATE_DAYS,
    DECIMAL_B64,
    EPOCH,
    PLAIN,
    TEXT,
    TS_ISO,
    TS_MICROS,
    TS_MILLIS,
    TS_NANOS,
    ColumnSpec,
    convert_decimal,
    decimal_type,
    parse_iso,
)

_SIMPLE = {"int": pa.int32(), "bigint": pa.int64(), "float": pa.float32(),
           "double": pa.float64(), "boolean": pa.bool_(), "string": pa.string(),
           "binary": pa.binary(), "date": pa.date32(), "timestamp": pa.timestamp("us", "UTC")}
# The days and microseconds Python's date and datetime can hold (0001-01-01 .. 9999-12-31).
_DAYS = (-719_162, 2_932_896)
_MICROS = (-62_135_596_800_000_000, 253_402_300_799_999_999)


class Unsupported(ValueError):
    """A value the columnar path does not convert the way the row path does."""


def arrow_type(spark_type: str) -> pa.DataType:
    """The Arrow type Spark reads into a `spark_type` column."""
    simple = _SIMPLE.get(spark_type)
    if simple is not None:
        return simple
    dec = decimal_type(spark_type)
    if dec is None:
        raise Unsupported(f"no Arrow type for {spark_type}")
    return pa.decimal128(*dec)


def _ints_in(values: list[Any], low: int, high: int) -> list[Any]:
    for v in values:
        if v is not None and (type(v) is not int or not low <= v <= high):
            raise Unsupported(f"{v!r} is not an integer in [{low}, {high}]")
    return values


def _micros(scale: int, floor: bool = False) -> Callable[[list[Any]], pa.Array]:
    def run(values: list[Any]) -> pa.Array:
        scaled = [None if v is None else (v // scale if floor else v * scale)
                  for v in _ints_in(values, -(1 << 63), (1 << 63) - 1)]
        return pa.array(_ints_in(scaled, *_MICROS), pa.int64()).cast(pa.timestamp("us", "UTC"))
    return run


def _iso(values: list[Any]) -> pa.Array:
    def one(text: Any) -> int:
        return (parse_iso(str(text)) - EPOCH) // _ONE_MICRO
    return pa.array([None if v is None else one(v) for v in values],
                    pa.int64()).cast(pa.timestamp("us", "UTC"))


def _days(values: list[Any]) -> pa.Array:
    return pa.array(_ints_in(values, *_DAYS), pa.int32()).cast(pa.date32())


def _text(values: list[Any]) -> pa.Array:
    return pa.array([v if v is None or isinstance(v, str) else json.dumps(v, separators=(",", ":"))
                     for v in values], pa.string())


def _bytes(values: list[Any]) -> pa.Array:
    return pa.array([None if v is None else base64.b64decode(v) if isinstance(v, str)
                     else bytes(v) for v in values], pa.binary())


_ONE_MICRO = EPOCH.resolution
_BY_KIND: dict[str, Callable[[list[Any]], pa.Array]] = {
    TEXT: _text, DATE_DAYS: _days, TS_MILLIS: _micros(1000), TS_MICROS: _micros(1),
    TS_NANOS: _micros(1000, floor=True), TS_ISO: _iso, BYTES_B64: _bytes,
}
_INT_RANGES = {"int": (-(1 << 31), (1 << 31) - 1), "bigint": (-(1 << 63), (1 << 63) - 1)}
_PLAIN_TYPES = frozenset({"int", "bigint", "float", "double", "boolean", "string"})


def column(spec: ColumnSpec, values: list[Any]) -> pa.Array:
    """`values` (JSON values, None for null) of `spec` as one Arrow array of its Spark type."""
    try:
        if spec.conversion == DECIMAL_B64:
            return pa.array([None if v is None else convert_decimal(v, spec.spark_type, spec.scale)
                             for v in values], arrow_type(spec.spark_type))
        if spec.conversion == PLAIN:
            if spec.spark_type not in _PLAIN_TYPES:
                raise Unsupported(f"plain {spec.spark_type}")
            if spec.spark_type in _INT_RANGES:
                _ints_in(values, *_INT_RANGES[spec.spark_type])
            return pa.array(values, arrow_type(spec.spark_type))
        convert = _BY_KIND.get(spec.conversion)
        if convert is None:
            raise Unsupported(spec.conversion)
        return convert(values)
    except Unsupported:
        raise
    except (ValueError, TypeError, ArithmeticError, pa.ArrowException) as exc:
        raise Unsupported(f"column {spec.name}: {exc}") from None
