"""Debezium / Kafka Connect field types -> Spark column types, and value conversion.

A column is described by a `ColumnSpec`: its Spark SQL type and the conversion that turns a
JSON value of the change event into the Python value Spark expects for that type.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

EPOCH_DATE = dt.date(1970, 1, 1)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
MAX_DECIMAL_PRECISION = 38

# Conversion kinds: how a JSON value becomes a Spark value.
PLAIN = "plain"            # JSON value as is (numbers, booleans, strings)
TEXT = "text"              # anything -> string (structs/arrays/maps as JSON text)
DATE_DAYS = "date_days"    # int days since epoch -> date
TS_MILLIS = "ts_millis"    # int ms since epoch (UTC wall clock) -> timestamp
TS_MICROS = "ts_micros"
TS_NANOS = "ts_nanos"
TS_ISO = "ts_iso"          # ISO-8601 string (ZonedTimestamp) -> timestamp
DECIMAL_B64 = "decimal_b64"  # base64 big-endian two's complement unscaled -> Decimal
BYTES_B64 = "bytes_b64"    # base64 -> bytes
CONVERSIONS = frozenset({PLAIN, TEXT, DATE_DAYS, TS_MILLIS, TS_MICROS, TS_NANOS, TS_ISO,
                         DECIMAL_B64, BYTES_B64})

_CONNECT_PRIMITIVES = {
    "int8": "int", "int16": "int", "int32": "int", "int64": "bigint",
    "float32": "float", "float": "float", "float64": "double", "double": "double",
    "boolean": "boolean", "string": "string", "bytes": "binary",
}

_LOGICAL = {
    "io.debezium.time.Date": ("date", DATE_DAYS),
    "org.apache.kafka.connect.data.Date": ("date", DATE_DAYS),
    "io.debezium.time.Timestamp": ("timestamp", TS_MILLIS),
    "org.apache.kafka.connect.data.Timestamp": ("timestamp", TS_MILLIS),
    "io.debezium.time.MicroTimestamp": ("timestamp", TS_MICROS),
    "io.debezium.time.NanoTimestamp": ("timestamp", TS_NANOS),
    "io.debezium.time.ZonedTimestamp": ("timestamp", TS_ISO),
    # Times of day stay numbers (ms/us/ns since midnight): Spark 3.5 has no TIME type.
    "io.debezium.time.Time": ("int", PLAIN),
    "io.debezium.time.MicroTime": ("bigint", PLAIN),
    "io.debezium.time.NanoTime": ("bigint", PLAIN),
    "io.debezium.time.ZonedTime": ("string", PLAIN),
    "io.debezium.time.Year": ("int", PLAIN),
    "io.debezium.data.Bits": ("binary", BYTES_B64),
    "io.debezium.data.Enum": ("string", PLAIN),
    "io.debezium.data.EnumSet": ("string", PLAIN),
    "io.debezium.data.Json": ("string", PLAIN),
    "io.debezium.data.Uuid": ("string", PLAIN),
}


@dataclass(frozen=True)
class ColumnSpec:
    """One table column: name, Spark SQL type (DDL form) and value conversion kind."""

    name: str
    spark_type: str
    conversion: str = PLAIN
    optional: bool = True
    scale: int | None = None  # DECIMAL_B64: the scale the field's schema gives its values

    def convert(self, value: Any) -> Any:
        if self.conversion == DECIMAL_B64 and value is not None:
            return convert_decimal(value, self.spark_type, self.scale)
        return convert_value(value, self.spark_type, self.conversion)


def spec_from_connect_field(field: dict[str, Any]) -> ColumnSpec:
    """The column for one field of a Kafka Connect struct schema (JSON converter form)."""
    name = str(field.get("field"))
    ftype = str(field.get("type"))
    logical = field.get("name")
    optional = bool(field.get("optional", True))
    if logical == "org.apache.kafka.connect.data.Decimal":
        params = field.get("parameters") or {}
        if not isinstance(params, dict):
            raise SchemaError(f"Decimal field {name!r} has parameters {params!r}")
        return decimal_spec(name, params, optional)
    if isinstance(logical, str) and logical in _LOGICAL:
        spark_type, conversion = _LOGICAL[logical]
        return ColumnSpec(name, spark_type, conversion, optional)
    if ftype in _CONNECT_PRIMITIVES:
        spark_type = _CONNECT_PRIMITIVES[ftype]
        return ColumnSpec(name, spark_type, BYTES_B64 if spark_type == "binary" else PLAIN,
                          optional)
    # struct / array / map (geometry, VariableScaleDecimal, ...): kept as JSON text.
    return ColumnSpec(name, "string", TEXT, optional)


class SchemaError(ValueError):
    """A field schema the job cannot type (e.g. a Decimal whose scale is not a number)."""


def _int_parameter(params: dict[str, Any], key: str, default: int) -> int:
    text = params.get(key, default)
    try:
        value = int(str(text))
    except ValueError:
        raise SchemaError(f"Decimal parameter {key}={text!r} is not an integer") from None
    if not 0 <= value <= 1000:
        raise SchemaError(f"Decimal parameter {key}={text!r} is out of range")
    return value


def decimal_spec(name: str, params: dict[str, Any], optional: bool = True) -> ColumnSpec:
    """Connect Decimal: decimal(p,s) up to Spark's 38 digits, else the exact text in a string."""
    scale = _int_parameter(params, "scale", 0)
    precision = max(1, _int_parameter(params, "connect.decimal.precision", MAX_DECIMAL_PRECISION),
                    scale)
    if precision > MAX_DECIMAL_PRECISION:
        return ColumnSpec(name, "string", DECIMAL_B64, optional, scale)
    return ColumnSpec(name, f"decimal({precision},{scale})", DECIMAL_B64, optional, scale)


def decimal_hints(topic: str, columns: dict[str, tuple[int, int]]) -> dict[str, ColumnSpec]:
    """Specs of --decimal-column hints (DB.TABLE.COLUMN -> (p, s)) for `<prefix>.DB.TABLE`."""
    table = ".".join(topic.split(".")[-2:]) + "."
    return {name[len(table):]: ColumnSpec(name[len(table):], f"decimal({p},{s})", DECIMAL_B64,
                                          scale=s)
            for name, (p, s) in columns.items() if name.startswith(table)}


def specs_from_struct_schema(schema: dict[str, Any] | None) -> list[ColumnSpec]:
    """Columns of a Connect struct schema (the `after`/`before` or key schema); [] if none."""
    if not schema or schema.get("type") != "struct":
        return []
    return [spec_from_connect_field(f) for f in schema.get("fields") or []
            if isinstance(f, dict) and "field" in f]


def spec_from_json_value(name: str, value: Any) -> ColumnSpec | None:
    """Schemaless: the column a bare JSON value suggests; None for null (type unknown yet)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return ColumnSpec(name, "boolean")
    if isinstance(value, int):
        return ColumnSpec(name, "bigint")
    if isinstance(value, float):
        return ColumnSpec(name, "double")
    if isinstance(value, str):
        return ColumnSpec(name, "string")
    return ColumnSpec(name, "string", TEXT)


def decode_decimal(text: str, scale: int) -> Decimal:
    """Kafka Connect Decimal: base64 of the big-endian two's-complement unscaled integer."""
    raw = base64.b64decode(text, validate=True)
    if not raw:
        raise ValueError("empty Decimal bytes")
    return Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-scale)


def decimal_type(spark_type: str) -> tuple[int, int] | None:
    """(precision, scale) of a `decimal(p,s)` Spark type, None for any other type."""
    if not spark_type.startswith("decimal("):
        return None
    inner = spark_type[spark_type.index("(") + 1:spark_type.rindex(")")]
    precision, _, scale = inner.partition(",")
    return int(precision), int(scale or 0)


def convert_decimal(value: Any, spark_type: str, scale: int | None) -> Any:
    """A Connect Decimal value (always base64 bytes on the wire) -> exactly that Decimal.

    `scale` comes from the field's schema; without one (a schemaless event typed by the
    table) the column's scale is the encoder's. Never rounded: a value the column cannot
    hold exactly is an error (the record is dead-lettered).
    """
    if not isinstance(value, str):
        raise TypeError(f"a Decimal is base64 text, got {type(value).__name__}")
    target = decimal_type(spark_type)
    if scale is None:
        if target is None:
            raise ValueError(f"no scale known for a Decimal in a {spark_type} column")
        scale = target[1]
    number = decode_decimal(value, scale)
    if target is None:
        return format(number, "f")
    precision, column_scale = target
    if scale > column_scale:
        raise ValueError(f"scale {scale} does not fit {spark_type} without rounding")
    if number and number.adjusted() >= precision - column_scale:
        raise ValueError(f"{number} does not fit {spark_type}")
    return number


def parse_iso(text: str) -> dt.datetime:
    value = dt.datetime.fromisoformat(text)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def convert_value(value: Any, spark_type: str, conversion: str) -> Any:
    """A JSON value of an event -> the Python value Spark stores in a `spark_type` column.

    Schemaless events arrive with PLAIN conversion; then the target type decides
    (ints into a date column are days, into a timestamp column milliseconds).
    """
    if value is None:
        return None
    if conversion == PLAIN:
        conversion = _implicit_conversion(value, spark_type)
    if conversion == PLAIN:
        return _plain(value, spark_type)
    if conversion == TEXT:
        return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    if conversion == DATE_DAYS:
        if isinstance(value, str):
            return dt.date.fromisoformat(value[:10])
        return EPOCH_DATE + dt.timedelta(days=int(value))
    if conversion in (TS_MILLIS, TS_MICROS, TS_NANOS):
        if isinstance(value, str):
            return parse_iso(value)
        micros = {TS_MILLIS: int(value) * 1000, TS_MICROS: int(value),
                  TS_NANOS: int(value) // 1000}[conversion]
        return EPOCH + dt.timedelta(microseconds=micros)
    if conversion == TS_ISO:
        return parse_iso(str(value))
    if conversion == DECIMAL_B64:
        return convert_decimal(value, spark_type, None)
    if conversion == BYTES_B64:
        return base64.b64decode(value) if isinstance(value, str) else bytes(value)
    raise ValueError(f"unknown conversion {conversion!r}")


def _implicit_conversion(value: Any, spark_type: str) -> str:
    if spark_type == "date":
        return DATE_DAYS
    if spark_type == "timestamp":
        return TS_ISO if isinstance(value, str) else TS_MILLIS
    if spark_type.startswith("decimal"):
        return DECIMAL_B64
    if spark_type == "binary":
        return BYTES_B64
    if spark_type == "string" and not isinstance(value, str):
        return TEXT
    return PLAIN


def _plain(value: Any, spark_type: str) -> Any:
    if spark_type in ("tinyint", "smallint", "int", "bigint"):
        return int(value)
    if spark_type in ("float", "double"):
        return float(value)
    if spark_type == "boolean":
        return bool(value)
    return value

