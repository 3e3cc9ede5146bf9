"""Decode one Kafka record of a Debezium change topic into a `Change` (or a `BadRecord`).

Both JSON converter shapes are accepted: with schemas (`{"schema":..., "payload":...}`) and
schemaless (the payload alone). Values come out converted to Spark's Python types.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from spark_consumer.decoding.dbztypes import (
    ColumnSpec,
    SchemaError,
    spec_from_json_value,
    specs_from_struct_schema,
)

OPS = frozenset({"c", "u", "d", "r"})
FLATTENED = "a flattened record"  # BadRecord.reason of one: the job refuses its topic
TRUNCATE = "t"  # Debezium's truncate record: the table emptied at this offset


@dataclass(frozen=True, slots=True)
class Change:
    """One applicable change: `row` holds the columns (after image, or the key for a delete)."""

    topic: str
    partition: int
    offset: int
    op: str
    key: str
    row: dict[str, Any]


@dataclass(frozen=True, slots=True)
class BadRecord:
    """A record that cannot be applied: it goes to the dead-letter file with its reason."""

    topic: str
    partition: int
    offset: int
    reason: str
    key: bytes | None
    value: bytes | None

    def to_json(self) -> str:
        return json.dumps({"topic": self.topic, "partition": self.partition,
                           "offset": self.offset, "reason": self.reason,
                           "key": _text(self.key), "value": _text(self.value)})


@dataclass(frozen=True, slots=True)
class Truncate:
    """An op=t record: every change of its partition before `offset` is void, and the
    table is emptied there (job/batch.py commits that before the changes after it)."""

    topic: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class Shape:
    """The columns and key columns a record implies for its table (one per distinct shape)."""

    topic: str
    columns: tuple[ColumnSpec, ...]
    key_columns: tuple[str, ...]
    typed: bool = True  # False: schemaless JSON, column types guessed from values


def _text(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return "base64:" + base64.b64encode(raw).decode()


class DecodeError(ValueError):
    """The reason a record is bad (becomes BadRecord.reason)."""


def _split(raw: bytes, what: str) -> tuple[Any, dict[str, Any] | None]:
    """(payload, schema or None) of a JSON-converter message."""
    try:
        obj = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DecodeError(f"{what} is not JSON: {exc}") from None
    if isinstance(obj, dict) and set(obj) == {"schema", "payload"}:
        schema = obj["schema"]
        return obj["payload"], schema if isinstance(schema, dict) else None
    return obj, None


def _flattened(payload: dict[str, Any], schema: dict[str, Any] | None) -> bool:
    """A row as ExtractNewRecordState writes it: its value schema named `<topic>.Value` (as
    the table's row schema is), or the fields it adds (`__op`, `__deleted`)."""
    if {"before", "after"} & set(payload):
        return False
    name = str((schema or {}).get("name") or "")
    return ((name.endswith(".Value") and "TransactionMetadata" not in name)
            or not {"__op", "__deleted"}.isdisjoint(payload))


def field_schema(schema: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    """The schema of struct field `name` (an envelope's `before`/`after`), None if absent."""
    if not schema:
        return None
    for field in schema.get("fields") or []:
        if isinstance(field, dict) and field.get("field") == name:
            return field
    return None


class Decoder:
    """Stateful per task: caches column specs per distinct schema and remembers new shapes.

    `known` maps topic -> {column: spec} of the existing table, used to type schemaless values.
    """

    def __init__(self, known: dict[str, dict[str, ColumnSpec]] | None = None) -> None:
        self.known = known or {}
        self._spec_cache: dict[str, tuple[ColumnSpec, ...]] = {}
        self.shapes: dict[tuple[str, tuple[ColumnSpec, ...], tuple[str, ...]], Shape] = {}

    def _specs_for(self, schema: dict[str, Any]) -> tuple[ColumnSpec, ...]:
        cache_key = json.dumps(schema, sort_keys=True)
        specs = self._spec_cache.get(cache_key)
        if specs is None:
            try:
                specs = tuple(specs_from_struct_schema(schema))
            except SchemaError as exc:
                raise DecodeError(f"schema: {exc}") from None
            self._spec_cache[cache_key] = specs
        return specs

    def _convert(self, topic: str, values: dict[str, Any],
                 schema: dict[str, Any] | None) -> tuple[dict[str, Any], tuple[ColumnSpec, ...]]:
        if schema is not None:
            specs = self._specs_for(schema)
        else:
            known = self.known.get(topic, {})
            inferred = []
            for name, value in values.items():
                spec = known.get(name) or spec_from_json_value(name, value)
                if spec is not None:
                    inferred.append(spec)
            specs = tuple(inferred)
        row: dict[str, Any] = {}
        for spec in specs:
            if spec.name in values:
                try:
                    row[spec.name] = spec.convert(values[spec.name])
                except (ValueError, TypeError, ArithmeticError) as exc:
                    raise DecodeError(f"column {spec.name}: bad {spec.spark_type} value "
                                      f"{values[spec.name]!r}: {exc}") from None
        return row, specs

    def decode(self, topic: str, partition: int, offset: int, key: bytes | None,
               value: bytes | None) -> Change | Truncate | BadRecord | None:
        """The change of one record; None for a tombstone (ignored by design)."""
        if value is None:
            return None
        try:
            return self._decode(topic, partition, offset, key, value)
        except DecodeError as exc:
            return BadRecord(topic, partition, offset, str(exc), key, value)

    def _decode(self, topic: str, partition: int, offset: int, key: bytes | None,
                value: bytes) -> Change | Truncate | None:
        payload, schema = _split(value, "value")
        if payload is None:
            return None  # JsonConverter with schemas writes a tombstone as a null payload
        if not isinstance(payload, dict):
            raise DecodeError("value is not a change envelope (not a JSON object)")
        op = payload.get("op")
        if op == TRUNCATE:
            return Truncate(topic, partition, offset)
        if op is None and _flattened(payload, schema):
            raise DecodeError(f"{FLATTENED} (the row alone, no change envelope)")
        if op not in OPS:
            raise DecodeError(f"unknown op {op!r}")
        if key is None:
            raise DecodeError("no Kafka key (table without primary key?)")
        key_payload, key_schema = _split(key, "key")
        if not isinstance(key_payload, dict) or not key_payload:
            raise DecodeError("key is not a JSON object of primary key columns")
        image_name = "before" if op == "d" else "after"
        image = payload.get(image_name)
        if op != "d" and not isinstance(image, dict):
            raise DecodeError(f"op {op!r} without an 'after' object")
        image_schema = field_schema(schema, image_name)
        key_row, _ = self._convert(topic, key_payload, key_schema)
        if isinstance(image, dict):
            row, specs = self._convert(topic, image, image_schema)
            self._note_shape(topic, specs, tuple(key_payload), image_schema is not None)
        else:
            row = {}
        if op == "d":
            row = key_row
        else:
            for name, val in key_row.items():
                row.setdefault(name, val)
        canonical = json.dumps(key_payload, sort_keys=True, separators=(",", ":"))
        return Change(topic, partition, offset, op, canonical, row)

    def _note_shape(self, topic: str, specs: tuple[ColumnSpec, ...],
                    key_columns: tuple[str, ...], typed: bool) -> None:
        ident = (topic, specs, key_columns)
        if ident not in self.shapes:
            self.shapes[ident] = Shape(topic, specs, key_columns, typed)
