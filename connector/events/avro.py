"""Kafka Connect schema (JsonConverter dict form) to Avro, as Confluent's AvroData maps it."""

from __future__ import annotations

import re
from typing import Any

_PRIMITIVES = {
    "int8": "int", "int16": "int", "int32": "int", "int64": "long", "float": "float",
    "double": "double", "float32": "float", "float64": "double", "boolean": "boolean", "string": "string", "bytes": "bytes",
}
_INVALID = re.compile(r"[^A-Za-z0-9_]")
DECIMAL = "org.apache.kafka.connect.data.Decimal"


def _avro_name(name: str) -> str:
    """Avro name parts must match [A-Za-z_][A-Za-z0-9_]*; Debezium's adjuster uses '_'."""
    parts = []
    for part in name.split("."):
        part = _INVALID.sub("_", part) or "_"
        parts.append("_" + part if part[0].isdigit() else part)
    return ".".join(parts)


def _connect_props(schema: dict[str, Any], out: dict[str, Any], with_name: bool) -> None:
    if "version" in schema:
        out["connect.version"] = schema["version"]
    if "doc" in schema:
        out["connect.doc"] = schema["doc"]
    if "parameters" in schema:
        out["connect.parameters"] = dict(schema["parameters"])
    if "default" in schema:
        out["connect.default"] = _json_default(schema["default"])
    if with_name and "name" in schema:
        out["connect.name"] = schema["name"]


def _convert(schema: dict[str, Any], seen: set[str]) -> Any:
    kind = schema["type"]
    if kind == "struct":
        full = _avro_name(schema.get("name") or "io.confluent.connect.avro.ConnectDefault")
        if full in seen:
            return full  # a named type is defined once, then referenced by name
        seen.add(full)
        namespace, _, name = full.rpartition(".")
        record: dict[str, Any] = {"type": "record", "name": name}
        if namespace:
            record["namespace"] = namespace
        record["fields"] = [_field(f, seen) for f in schema["fields"]]
        _connect_props(schema, record, with_name=True)
        return record
    if kind == "array":
        return {"type": "array", "items": _optional(schema["items"], seen)}
    if kind == "map":
        return {"type": "map", "values": _optional(schema["values"], seen)}
    avro: dict[str, Any] = {"type": _PRIMITIVES[kind]}
    if kind in ("int8", "int16"):
        avro["connect.type"] = kind
    if schema.get("name") == DECIMAL:
        params = schema.get("parameters", {})
        avro["scale"] = int(params.get("scale", 0))
        avro["precision"] = int(params.get("connect.decimal.precision", 64))
    _connect_props(schema, avro, with_name=True)
    if schema.get("name") == DECIMAL:
        avro["logicalType"] = "decimal"
    return avro if len(avro) > 1 else avro["type"]


def _optional(schema: dict[str, Any], seen: set[str]) -> Any:
    base = _convert(schema, seen)
    if not schema.get("optional"):
        return base
    if schema.get("default") is not None:
        return [base, "null"]
    return ["null", base]


def _json_default(value: Any) -> Any:
    """Avro writes a bytes default as a string of code points 0-255 (the spec's rule)."""
    return value.decode("latin-1") if isinstance(value, bytes | bytearray) else value


def _field(schema: dict[str, Any], seen: set[str]) -> dict[str, Any]:
    field: dict[str, Any] = {"name": schema["field"], "type": _optional(schema, seen)}
    if schema.get("optional"):
        field["default"] = _json_default(schema.get("default"))
    elif "default" in schema:
        field["default"] = _json_default(schema["default"])
    return field


def avro_schema(schema: dict[str, Any]) -> Any:
    """The Avro schema (as a JSON-ready object) for a top-level Connect schema."""
    return _convert(schema, set())
