"""Debezium's default MySQL type mapping: a Kafka Connect schema and a converter per column.

The converters (`values`) run on the hot path, so everything type-dependent is decided here,
once per column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from connector.events import decoding, values
from connector.events.defaults import literal_value
from connector.events.values import Converter
from connector.schema import Column

# mysql-replication's decoding corrected (MySQL JSON as Debezium's text, VECTOR, ENUM/SET
# names and wide charsets: decoding.py), in every process that decodes the binlog (the
# reader imports this module).
decoding.install()

EMPTY_SET_SOURCE = "empty set"  # pymysqlreplication.constants.NONE_SOURCE.EMPTY_SET


Compiled = tuple[str, int, tuple[str, ...]]
"""`convert` as the compiled record writers run it (connector/native/src/convert.rs): its kind,
number (scale, fraction digits, BINARY length or -1) and SET members."""


@dataclass(frozen=True, slots=True)
class FieldMapping:
    """How one column appears in events: schema fragment (no "field" key), converter, default.

    `convert` is None when the decoded value is already the event value. `fallback` replaces a
    None that reaches a NOT NULL column (a zero date, an empty SET), as Debezium does.
    `compiled` is `convert` in compiled code (None: the writers call `convert`); it holds
    only while `convert` is this module's (see `with_convert`).
    """

    schema: dict[str, Any]
    convert: Converter | None
    fallback: Any
    compiled: Compiled | None = None

    def with_convert(self, schema: dict[str, Any], convert: Converter | None,
                     fallback: Any) -> FieldMapping:
        """This mapping changed (a column mapper's): a new converter drops `compiled`."""
        kept = self.compiled if convert is self.convert else None
        return FieldMapping(schema, convert, fallback, kept)


WriterColumn = tuple[str, str, Converter | None, Any, Compiled | None]
"""A column as the record writers see it: name, Connect type, converter, NOT NULL fallback and
the converter in compiled code (None: the writers call the converter)."""


def restore_empty_sets(row: dict[str, Any], none_sources: Mapping[str, str]) -> dict[str, Any]:
    """mysql-replication decodes an empty SET as None; put back '' (call with a row's
    `none_sources` before converting, so '' and NULL stay distinct as in a SELECT)."""
    for name, source in none_sources.items():
        if source == EMPTY_SET_SOURCE:
            row[name] = ""
    return row


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
    """Schema (with the column's DEFAULT, as Debezium copies it), converter, NOT NULL fallback
    (the DEFAULT where there is one: Debezium's convertValue gives a NOT NULL column whose
    value converts to none, a zero date say, its schema's default before its own fallback)."""
    mapping = _mapping(column, decimal_mode, time_precision_mode)
    if column.default is None:
        return mapping
    value = default_value(column, mapping)
    if value is None:
        return mapping
    fallback = mapping.fallback if column.nullable else value
    return mapping.with_convert({**mapping.schema, "default": value}, mapping.convert, fallback)


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

    def make(schema: dict[str, Any], convert: Converter | None, fallback: Any,
             compiled: str | None = None, number: int = -1,
             members: tuple[str, ...] = ()) -> FieldMapping:
        return FieldMapping(schema, convert, None if opt else fallback,
                            None if compiled is None else (compiled, number, members))

    if (t, column.unsigned) in _INT_TYPES:
        conv = values.bigint_unsigned if (t == "bigint" and column.unsigned) else None
        return make(_schema(_INT_TYPES[(t, column.unsigned)], opt), conv, 0,
                    "bigint_unsigned" if conv else None)
    if t == "boolean":  # declared BOOLEAN (stored as TINYINT(1))
        return make(_schema("boolean", opt), bool, False, "bool")
    if t == "decimal":
        scale = column.scale or 0
        if decimal_mode == "string":
            return make(_schema("string", opt), values.decimal_string(scale), "0",
                        "decimal_string", scale)
        if decimal_mode == "double":
            return make(_schema("double", opt), values.decimal_double, 0.0, "decimal_double")
        params = {"scale": str(scale), "connect.decimal.precision": str(column.precision or 10)}
        return make(_schema("bytes", opt, "org.apache.kafka.connect.data.Decimal", 1, params),
                    values.decimal_precise(scale), b"\x00", "decimal_precise", scale)
    if t == "float" and column.scale is not None:  # FLOAT(M,D): the 32-bit value, widened
        return make(_schema("double", opt), values.float32_widened, 0.0, "float32_widened")
    if t == "float":
        return make(_schema("float", opt), values.float32, 0.0, "float32")
    if t == "double":
        return make(_schema("double", opt), float, 0.0, "double")
    if t == "bit":
        length = column.length or 1
        if length == 1:
            return make(_schema("boolean", opt), values.bit_bool, False, "bit_bool")
        size = length // 8 + (1 if length % 8 else 0)
        return make(_schema("bytes", opt, "io.debezium.data.Bits", 1, {"length": str(length)}),
                    values.bits(length), b"", "bits", size)
    if t in STRING_TYPES:
        return make(_schema("string", opt), values.string, "", "string")
    if t in BINARY_TYPES:
        pad = column.length if t == "binary" else None
        return make(_schema("bytes", opt), values.binary(pad), b"", "binary",
                    -1 if pad is None else pad)
    if t == "date":
        name = "org.apache.kafka.connect.data.Date" if connect_mode else "io.debezium.time.Date"
        return make(_schema("int32", opt, name, 1), values.date_days, 0, "date_days")
    if t == "time":
        if connect_mode:
            return make(_schema("int32", opt, "org.apache.kafka.connect.data.Time", 1),
                        values.time_millis, 0, "time_millis")
        return make(_schema("int64", opt, "io.debezium.time.MicroTime", 1), values.time_micros, 0,
                    "time_micros")
    if t == "datetime":
        if connect_mode:
            return make(_schema("int64", opt, "org.apache.kafka.connect.data.Timestamp", 1),
                        values.epoch_millis, 0, "epoch_millis")
        if (column.scale or 0) <= 3:
            return make(_schema("int64", opt, "io.debezium.time.Timestamp", 1),
                        values.epoch_millis, 0, "epoch_millis")
        return make(_schema("int64", opt, "io.debezium.time.MicroTimestamp", 1),
                    values.epoch_micros, 0, "epoch_micros")
    if t == "timestamp":
        return make(_schema("string", opt, "io.debezium.time.ZonedTimestamp", 1),
                    values.zoned(column.scale or 0), "1970-01-01T00:00:00Z", "zoned",
                    column.scale or 0)
    if t == "year":
        return make(_schema("int32", opt, "io.debezium.time.Year", 1), values.year, 0, "year")
    if t == "enum":
        return make(_schema("string", opt, "io.debezium.data.Enum", 1,
                            {"allowed": ",".join(column.values)}), values.string, "", "string")
    if t == "set":
        return make(_schema("string", opt, "io.debezium.data.EnumSet", 1,
                            {"allowed": ",".join(column.values)}),
                    values.enum_set(column.values), "", "enum_set", -1, tuple(column.values))
    if t == "json":
        return make(_schema("string", opt, "io.debezium.data.Json", 1), values.json_text, "{}")
    if t == "vector":  # MySQL 9
        schema = {"type": "array", "items": {"type": "float", "optional": False},
                  "optional": opt, "name": "io.debezium.data.FloatVector", "version": 1}
        return make(schema, values.float_vector, [])
    if t == "geometry":
        schema = {"type": "struct", "fields": GEOMETRY_FIELDS, "optional": opt,
                  "name": "io.debezium.data.geometry.Geometry", "version": 1, "doc": "Geometry"}
        return make(schema, values.geometry, None)
    if t == "point":
        schema = {"type": "struct", "fields": POINT_FIELDS, "optional": opt,
                  "name": "io.debezium.data.geometry.Point", "version": 1,
                  "doc": "Geometry (POINT)"}
        return make(schema, values.point, None)
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
