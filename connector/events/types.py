"""Debezium's default MySQL type mapping: a Kafka Connect schema and a converter per column.

Converters accept a value as decoded by mysql-replication 1.0.17 (streaming) *and* by pymysql
(snapshot SELECT on a session with time_zone '+00:00') and give the same output for the same
stored value. They run on the hot path, so everything type-dependent is decided once per column.
"""

from __future__ import annotations

import datetime as dt
import json
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Context, Decimal
from typing import Any

from connector.events.defaults import literal_value
from connector.schema import Column

Converter = Callable[[Any], Any]

# The snapshot's pymysql session must read TIMESTAMP columns in UTC, as the binlog holds them.
SNAPSHOT_SESSION_INIT = "SET time_zone = '+00:00'"
EMPTY_SET_SOURCE = "empty set"  # pymysqlreplication.constants.NONE_SOURCE.EMPTY_SET

_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_EPOCH = dt.datetime(1970, 1, 1)
_DEC = Context(prec=200)
_BOOL_TRUE = frozenset({"1", b"\x01", 1})
_F32 = struct.Struct("<f")


@dataclass(frozen=True, slots=True)
class FieldMapping:
    """How one column appears in events: schema fragment (no "field" key), converter, default.

    `convert` is None when the decoded value is already the event value. `fallback` replaces a
    None that reaches a NOT NULL column (a zero date, an empty SET), as Debezium does.
    """

    schema: dict[str, Any]
    convert: Converter | None
    fallback: Any


def restore_empty_sets(values: dict[str, Any], none_sources: Mapping[str, str]) -> dict[str, Any]:
    """mysql-replication decodes an empty SET as None; put back '' (call with a row's
    `none_sources` before converting, so '' and NULL stay distinct as in a SELECT)."""
    for name, source in none_sources.items():
        if source == EMPTY_SET_SOURCE:
            values[name] = ""
    return values


# --- value converters -------------------------------------------------------------------------

def unscaled_bytes(value: Decimal, scale: int) -> bytes:
    """Kafka Connect Decimal: the unscaled value, big-endian two's complement, minimal length."""
    n = int(value.scaleb(scale, context=_DEC).to_integral_value(context=_DEC))
    return n.to_bytes((n if n >= 0 else ~n).bit_length() // 8 + 1, "big", signed=True)


def _as_decimal(value: Any) -> Decimal:
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _decimal_precise(scale: int) -> Converter:
    shift = Decimal(10) ** scale
    multiply = _DEC.multiply

    def convert(value: Any) -> bytes:
        # value * 10^scale is exact at this precision; it is integral unless the value has
        # more fraction digits than the column (then round as unscaled_bytes does).
        scaled = multiply(value if type(value) is Decimal else _as_decimal(value), shift)
        n = int(scaled)
        if scaled != n:
            n = int(scaled.to_integral_value(context=_DEC))
        return n.to_bytes((n if n >= 0 else ~n).bit_length() // 8 + 1, "big", signed=True)
    return convert


def _decimal_string(scale: int) -> Converter:
    quantum = Decimal(1).scaleb(-scale)

    def convert(value: Any) -> str:
        return format(_as_decimal(value).quantize(quantum, context=_DEC), "f")
    return convert


def _decimal_double(value: Any) -> float:
    return float(value)


def _bigint_unsigned(value: int) -> int:
    """bigint.unsigned.handling.mode=long: Java's long cast wraps values above 2^63-1."""
    return value - (1 << 64) if value >= 1 << 63 else value


def float32(value: Any) -> float:
    """FLOAT as Kafka's JsonConverter writes a Java float: the shortest decimal that reads
    back as the same 32-bit float (123456.7 from the binlog; a SELECT's text is shorter)."""
    exact = _F32.unpack(_F32.pack(float(value)))[0]
    for digits in range(6, 10):
        text = f"{exact:.{digits}g}"
        if _F32.unpack(_F32.pack(float(text)))[0] == exact:
            return float(text)
    return float(exact)


def float32_widened(value: Any) -> float:
    """FLOAT(M,D) as Debezium sends it: the exact 32-bit value as a double."""
    widened: float = _F32.unpack(_F32.pack(float(value)))[0]
    return widened


def _bit_int(value: Any) -> int:
    if isinstance(value, str):  # mysql-replication: "0101..."
        return int(value, 2) if value else 0
    if isinstance(value, bytes | bytearray):  # pymysql: big-endian bytes
        return int.from_bytes(value, "big")
    return int(value)


def _bit_bool(value: Any) -> bool:
    return _bit_int(value) != 0


def _bits(length: int) -> Converter:
    size = length // 8 + (1 if length % 8 else 0)

    def convert(value: Any) -> bytes:
        return _bit_int(value).to_bytes(size, "little")
    return convert


def _binary(length: int | None) -> Converter:
    def convert(value: Any) -> bytes:
        if isinstance(value, str):  # mysql-replication yields '' for an empty binary value
            value = value.encode("latin-1")
        if length is not None and len(value) < length:  # binlog strips BINARY(n) zero padding
            return bytes(value).ljust(length, b"\x00")
        return bytes(value)
    return convert


def _date_days(value: Any) -> int | None:
    if isinstance(value, dt.date):
        return value.toordinal() - _EPOCH_ORDINAL
    return None  # zero or invalid date ('0000-00-00' comes back from pymysql as a string)


def _time_micros(value: Any) -> int | None:
    if isinstance(value, dt.timedelta):
        return (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    return None


def _time_millis(value: Any) -> int | None:
    micros = _time_micros(value)
    return None if micros is None else micros // 1000


def _epoch_micros(value: Any) -> int | None:
    if isinstance(value, dt.datetime):
        days = value.toordinal() - _EPOCH_ORDINAL
        secs = days * 86_400 + value.hour * 3600 + value.minute * 60 + value.second
        return secs * 1_000_000 + value.microsecond
    return None


def _epoch_millis(value: Any) -> int | None:
    micros = _epoch_micros(value)
    return None if micros is None else micros // 1000


def _zoned(fsp: int) -> Converter:
    """io.debezium.time.ZonedTimestamp: ISO-8601 in UTC, exactly `fsp` fraction digits."""
    def convert(value: Any) -> str | None:
        if not isinstance(value, dt.datetime) or value == _EPOCH:
            return None  # zero TIMESTAMP (binlog: epoch 0, pymysql: a string)
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        text: str = value.isoformat(timespec=spec)
        return text[:cut] + "Z"
    spec = "seconds" if fsp <= 0 else "microseconds"
    cut = 19 if fsp <= 0 else 20 + min(fsp, 6)  # isoformat pads years to 4 digits
    return convert


def _year(value: Any) -> int:
    year = int(value)
    return 0 if year == 1900 else year  # mysql-replication adds 1900 to YEAR 0000


def _set(members: tuple[str, ...]) -> Converter:
    def convert(value: Any) -> str:
        if isinstance(value, str):
            return value
        return ",".join(m for m in members if m in value)  # definition order, as MySQL prints
    return convert


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return json.dumps(_plain_json(value), separators=(",", ":"), ensure_ascii=False)


def _plain_json(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, dict):
        return {_plain_json(k): _plain_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_json(v) for v in value]
    return value


def _string(value: Any) -> str:
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def _geometry(value: Any) -> dict[str, Any]:
    """MySQL's internal geometry is a 4-byte SRID + WKB; Debezium writes SRID 0 as null."""
    raw = bytes(value.encode("latin-1") if isinstance(value, str) else value)
    return {"wkb": raw[4:], "srid": int.from_bytes(raw[:4], "little") or None}


def _point(value: Any) -> dict[str, Any]:
    """io.debezium.data.geometry.Point: x and y read from the WKB, plus wkb and srid."""
    shape = _geometry(value)
    wkb = shape["wkb"]
    x, y = struct.unpack_from("<dd" if wkb[:1] == b"\x01" else ">dd", wkb, 5)
    return {"x": x, "y": y, **shape}


# --- schema fragments -------------------------------------------------------------------------

def _schema(type_: str, optional: bool, name: str | None = None, version: int | None = None,
            parameters: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type_, "optional": optional}
    if name is not None:
        out["name"] = name
    if version is not None:
        out["version"] = version
    if parameters:
        out["parameters"] = parameters
    return out


GEOMETRY_FIELDS = [
    {"type": "bytes", "optional": False, "field": "wkb"},
    {"type": "int32", "optional": True, "field": "srid"},
]
POINT_FIELDS = [
    {"type": "double", "optional": False, "field": "x"},
    {"type": "double", "optional": False, "field": "y"},
    {"type": "bytes", "optional": True, "field": "wkb"},
    {"type": "int32", "optional": True, "field": "srid"},
]
_INT_TYPES = {  # (type_name, unsigned) -> Connect type, as Debezium's binlog converters
    ("tinyint", False): "int16", ("tinyint", True): "int16",
    ("smallint", False): "int16", ("smallint", True): "int32",
    ("mediumint", False): "int32", ("mediumint", True): "int32",
    ("int", False): "int32", ("int", True): "int64",
    ("bigint", False): "int64", ("bigint", True): "int64",
}
STRING_TYPES = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext"})
BINARY_TYPES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})


def field_mapping(column: Column, decimal_mode: str = "precise",
                  time_precision_mode: str = "adaptive_time_microseconds") -> FieldMapping:
    """Schema (with the column's DEFAULT, as Debezium copies it), converter, NOT NULL fallback."""
    mapping = _mapping(column, decimal_mode, time_precision_mode)
    if column.default is None:
        return mapping
    value = default_value(column, mapping)
    if value is None:
        return mapping
    return FieldMapping({**mapping.schema, "default": value}, mapping.convert, mapping.fallback)


def default_value(column: Column, mapping: FieldMapping) -> Any:
    """The event value of the column's DEFAULT; None for NULL or an expression Debezium
    cannot evaluate either (CURRENT_TIMESTAMP on a TIMESTAMP gives the epoch, as there)."""
    text = column.default
    if text is None:
        return None
    if column.type_name == "timestamp" and text.lower().startswith("current_timestamp"):
        return "1970-01-01T00:00:00Z"
    value = literal_value(column)
    if value is None:
        return None
    return value if mapping.convert is None else mapping.convert(value)


def _mapping(column: Column, decimal_mode: str, time_precision_mode: str) -> FieldMapping:
    opt = column.nullable
    t = column.type_name
    connect_mode = time_precision_mode == "connect"

    def make(schema: dict[str, Any], convert: Converter | None, fallback: Any) -> FieldMapping:
        return FieldMapping(schema, convert, None if opt else fallback)

    if (t, column.unsigned) in _INT_TYPES:
        conv = _bigint_unsigned if (t == "bigint" and column.unsigned) else None
        return make(_schema(_INT_TYPES[(t, column.unsigned)], opt), conv, 0)
    if t == "boolean":  # declared BOOLEAN (stored as TINYINT(1))
        return make(_schema("boolean", opt), bool, False)
    if t == "decimal":
        scale = column.scale or 0
        if decimal_mode == "string":
            return make(_schema("string", opt), _decimal_string(scale), "0")
        if decimal_mode == "double":
            return make(_schema("double", opt), _decimal_double, 0.0)
        params = {"scale": str(scale), "connect.decimal.precision": str(column.precision or 10)}
        return make(_schema("bytes", opt, "org.apache.kafka.connect.data.Decimal", 1, params),
                    _decimal_precise(scale), b"\x00")
    if t == "float" and column.scale is not None:  # FLOAT(M,D): the 32-bit value, widened
        return make(_schema("double", opt), float32_widened, 0.0)
    if t == "float":
        return make(_schema("float", opt), float32, 0.0)
    if t == "double":
        return make(_schema("double", opt), float, 0.0)
    if t == "bit":
        length = column.length or 1
        if length == 1:
            return make(_schema("boolean", opt), _bit_bool, False)
        return make(_schema("bytes", opt, "io.debezium.data.Bits", 1, {"length": str(length)}),
                    _bits(length), b"")
    if t in STRING_TYPES:
        return make(_schema("string", opt), _string, "")
    if t in BINARY_TYPES:
        return make(_schema("bytes", opt), _binary(column.length if t == "binary" else None),
                    b"")
    if t == "date":
        name = "org.apache.kafka.connect.data.Date" if connect_mode else "io.debezium.time.Date"
        return make(_schema("int32", opt, name, 1), _date_days, 0)
    if t == "time":
        if connect_mode:
            return make(_schema("int32", opt, "org.apache.kafka.connect.data.Time", 1),
                        _time_millis, 0)
        return make(_schema("int64", opt, "io.debezium.time.MicroTime", 1), _time_micros, 0)
    if t == "datetime":
        if connect_mode:
            return make(_schema("int64", opt, "org.apache.kafka.connect.data.Timestamp", 1),
                        _epoch_millis, 0)
        if (column.scale or 0) <= 3:
            return make(_schema("int64", opt, "io.debezium.time.Timestamp", 1), _epoch_millis, 0)
        return make(_schema("int64", opt, "io.debezium.time.MicroTimestamp", 1),
                    _epoch_micros, 0)
    if t == "timestamp":
        return make(_schema("string", opt, "io.debezium.time.ZonedTimestamp", 1),
                    _zoned(column.scale or 0), "1970-01-01T00:00:00Z")
    if t == "year":
        return make(_schema("int32", opt, "io.debezium.time.Year", 1), _year, 0)
    if t == "enum":
        return make(_schema("string", opt, "io.debezium.data.Enum", 1,
                            {"allowed": ",".join(column.values)}), _string, "")
    if t == "set":
        return make(_schema("string", opt, "io.debezium.data.EnumSet", 1,
                            {"allowed": ",".join(column.values)}), _set(column.values), "")
    if t == "json":
        return make(_schema("string", opt, "io.debezium.data.Json", 1), _json_text, "{}")
    if t == "geometry":
        schema = {"type": "struct", "fields": GEOMETRY_FIELDS, "optional": opt,
                  "name": "io.debezium.data.geometry.Geometry", "version": 1, "doc": "Geometry"}
        return make(schema, _geometry, None)
    if t == "point":
        schema = {"type": "struct", "fields": POINT_FIELDS, "optional": opt,
                  "name": "io.debezium.data.geometry.Point", "version": 1,
                  "doc": "Geometry (POINT)"}
        return make(schema, _point, None)
    raise ValueError(f"column {column.name!r}: unsupported type {t!r}")


def connect_field(column: Column, mapping: FieldMapping) -> dict[str, Any]:
    """The struct member Kafka Connect's JsonConverter writes: the fragment plus "field"."""
    return {**mapping.schema, "field": column.name}


class RowConverter:
    """Turns a decoded row dict into the event's column values, for a fixed column list.

    The per-table function is generated once (one dict literal, no per-column loop), because
    it runs for every row of every event.
    """

    __slots__ = ("_fn", "names")

    def __init__(self, columns: Iterable[Column], mappings: Iterable[FieldMapping]) -> None:
        plan = [(c.name, m.convert, m.fallback) for c, m in zip(columns, mappings, strict=True)]
        self.names = tuple(name for name, _, _ in plan)
        env: dict[str, Any] = {}
        items = []
        for i, (name, convert, fallback) in enumerate(plan):
            env[f"f{i}"] = fallback
            key = repr(name)
            if convert is None:
                expr = f"f{i} if (v := g({key})) is None else v"
            else:
                env[f"c{i}"] = convert
                expr = f"f{i} if (v := g({key})) is None or (v := c{i}(v)) is None else v"
            items.append(f"        {key}: {expr},")
        source = "def convert(row):\n    g = row.get\n    return {\n" + "\n".join(items) + "\n    }\n"
        exec(compile(source, "<row-converter>", "exec"), env)  # noqa: S102 - names are repr()'d
        self._fn: Callable[[Mapping[str, Any]], dict[str, Any]] = env["convert"]

    def __call__(self, row: Mapping[str, Any]) -> dict[str, Any]:
        return self._fn(row)
