"""Debezium's ExtractNewRecordState SMT, applied where records leave the dispatcher.

As Kafka Connect applies a transform to every record a connector produces, `UnwrapSink`
sits between the dispatcher and the producer: a change record (an Envelope) becomes its
row state as Debezium 3.6.3 makes it; a tombstone is kept or dropped; schema changes,
heartbeats and transaction records pass unchanged (no Envelope). The record's payload is
read back with the converter that wrote it and written again with the new schema, so JSON
(with or without schemas) and Avro get the same transform.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from connector.events.converters import Codec, CodecFactory
from connector.events.envelope import EventEncoder
from connector.smt import FieldRef, UnwrapSettings

Headers = list[tuple[str, str | bytes | None]]
DELETED_FIELD = "__deleted"
_BASICS = ("name", "version", "doc", "parameters")


class RecordSink(Protocol):
    """Where the dispatcher sends records: the producer's sink, or a transform before it."""

    def send(self, topic: str, key: bytes | None, value: bytes | None,
             headers: Headers | None = None) -> None: ...


def _basics(schema: dict[str, Any], optional: bool) -> dict[str, Any]:
    """Kafka's SchemaUtil.copySchemaBasics: type, name, version, doc and parameters (not
    the default); the copy's optionality is the caller's."""
    return {"type": schema["type"], "optional": optional,
            **{k: schema[k] for k in _BASICS if k in schema}}


def _member(schema: dict[str, Any], name: str) -> dict[str, Any] | None:
    for field in schema.get("fields", ()):
        if field["field"] == name:
            return dict(field)
    return None


def header_value(value: Any) -> bytes | None:
    """Kafka Connect's default header.converter (SimpleHeaderConverter): text, numbers as
    their digits, booleans as true/false, null as a header without a value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8")


@dataclass(frozen=True, slots=True)
class Unwrapped:
    """A transformed record: `schema` None with `payload` None is a tombstone; a schema
    with a None payload is a null value of that schema (the `tombstone` mode's delete)."""

    schema: dict[str, Any] | None
    payload: dict[str, Any] | None
    headers: Headers


class Unwrap:
    """ExtractNewRecordState on Connect-level records (envelope schema + payload)."""

    def __init__(self, settings: UnwrapSettings) -> None:
        self.settings = settings
        self._schemas: dict[int, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {}

    def _row_schemas(self, envelope: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The `after` field's schema and the unwrapped record's (rewrite, add.fields)."""
        cached = self._schemas.get(id(envelope))
        if cached is not None and cached[0] is envelope:
            return cached[1], cached[2]
        row = _member(envelope, "after")
        assert row is not None, "an Envelope has an after field"
        row.pop("field")
        out = row
        if self.settings.rewrites:  # Kafka's InsertField: a struct copy, then the field
            out = {"type": "struct", "fields": [*row["fields"], {
                "type": "string", "optional": True, "field": DELETED_FIELD}],
                **_basics(row, False)}
        if self.settings.add_fields:
            added = [{**_basics(schema, True), "field": ref.name}
                     for ref in self.settings.add_fields
                     if (schema := self._source_schema(envelope, ref)) is not None]
            out = {"type": "struct", "fields": [*out["fields"], *added], **_basics(out, False)}
        if len(self._schemas) >= 1024:
            self._schemas.clear()
        self._schemas[id(envelope)] = (envelope, row, out)
        return row, out

    @staticmethod
    def _source_schema(envelope: dict[str, Any], ref: FieldRef) -> dict[str, Any] | None:
        """The schema of the field `ref` names (Debezium's FieldReference.getField):
        inside its struct, else at the top; None when it is in neither (left out)."""
        parent = envelope if ref.struct is None else _member(envelope, ref.struct)
        found = None if parent is None else _member(parent, ref.field)
        return found if found is not None else _member(envelope, ref.field)

    @staticmethod
    def _value(payload: dict[str, Any], envelope: dict[str, Any], ref: FieldRef) -> Any:
        parent = payload if ref.struct is None else payload.get(ref.struct)
        if parent is None:
            return None  # no transaction block: the field is null
        holder = envelope if ref.struct is None else _member(envelope, ref.struct)
        if holder is not None and _member(holder, ref.field) is not None:
            return parent.get(ref.field)
        return payload.get(ref.field)

    def headers(self, envelope: dict[str, Any], payload: dict[str, Any]) -> Headers:
        return [(ref.name, header_value(self._value(payload, envelope, ref)))
                for ref in self.settings.add_headers
                if self._source_schema(envelope, ref) is not None]

    def tombstone(self) -> Unwrapped | None:
        """A tombstone: kept only by rewrite-with-tombstone; an `op` header says d."""
        if self.settings.mode != "rewrite-with-tombstone":
            return None
        return Unwrapped(None, None, [(ref.name, b"d") for ref in self.settings.add_headers
                                      if ref.field == "op"])

    def change(self, envelope: dict[str, Any], payload: dict[str, Any]) -> Unwrapped | None:
        """A change record's row state as the SMT writes it; None when it drops it."""
        s = self.settings
        headers = self.headers(envelope, payload)
        after, before = payload.get("after"), payload.get("before")
        row_schema, out_schema = self._row_schemas(envelope)
        if after is None:
            if before is None or s.mode == "drop":
                return None  # a truncate (none from MySQL) or a dropped delete
            if s.mode == "tombstone":
                return Unwrapped(row_schema, None, headers)
            if s.mode == "delete-to-tombstone":
                return Unwrapped(None, None, headers)
            row = self._rewritten(row_schema, before, "true")
        else:
            row = self._rewritten(row_schema, after, "false") if s.rewrites else after
            if not s.rewrites and not s.add_fields:
                return Unwrapped(row_schema, row, headers)
        for ref in s.add_fields:
            if self._source_schema(envelope, ref) is not None:
                row[ref.name] = self._value(payload, envelope, ref)
        return Unwrapped(out_schema, row, headers)

    def _rewritten(self, row_schema: dict[str, Any], row: dict[str, Any],
                   deleted: str) -> dict[str, Any]:
        """InsertField's copy with `__deleted`: with the SMT's replace.null.with.default
        [true] a null takes its field's default (Struct.get), as the copy reads it."""
        out = dict(row)
        if self.settings.replace_null:
            for field in row_schema["fields"]:
                if out.get(field["field"]) is None and field.get("default") is not None:
                    out[field["field"]] = field["default"]
        out[DELETED_FIELD] = deleted
        return out


class UnwrapSink:
    """The dispatcher's sink with the SMT applied to change topics' records."""

    def __init__(self, sink: RecordSink, unwrap: Unwrap, encoder: EventEncoder,
                 codecs: CodecFactory) -> None:
        self._sink = sink
        self._unwrap = unwrap
        self._encoder = encoder
        self._factory = codecs  # the unwrapped records' codecs (Avro: their own subjects)
        self._codecs: dict[tuple[str, int], tuple[dict[str, Any], Codec]] = {}

    def _codec(self, topic: str, schema: dict[str, Any]) -> Codec:
        cached = self._codecs.get((topic, id(schema)))
        if cached is not None and cached[0] is schema:
            return cached[1]
        codec = self._factory.codec("value", topic, schema)
        if len(self._codecs) >= 4096:
            self._codecs.clear()
        self._codecs[(topic, id(schema))] = (schema, codec)
        return codec

    def send(self, topic: str, key: bytes | None, value: bytes | None,
             headers: Headers | None = None) -> None:
        table = self._encoder.for_topic(topic)
        if table is None:
            self._sink.send(topic, key, value, headers)
            return
        out = (self._unwrap.tombstone() if value is None
               else self._unwrap.change(table.value_schema, table.decode_value(value)))
        if out is None:
            return
        if out.schema is None:
            data = None
        else:
            codec = self._codec(topic, out.schema)
            data = codec.encode_null() if out.payload is None else codec.encode(out.payload)
        merged = [*(headers or []), *out.headers]
        self._sink.send(topic, key, data, merged or None)


def with_transforms(settings: UnwrapSettings | None, sink: RecordSink, encoder: EventEncoder
                    ) -> RecordSink:
    """`sink`, or the SMT before it when the connector file configures one."""
    if settings is None:
        return sink
    return UnwrapSink(sink, Unwrap(settings), encoder, CodecFactory(encoder.config))

