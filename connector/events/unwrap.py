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
from connector.settings.smt import FieldRef, UnwrapSettings

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


@dataclass(frozen=True, slots=True)
class _Lookup:
    """Where an added field or header's value is (Debezium's FieldReference.getValue)."""

    name: str
    struct: str | None
    field: str
    in_struct: bool  # found in its struct, not (as a fallback) at the envelope's top

    def value(self, payload: dict[str, Any]) -> Any:
        parent = payload if self.struct is None else payload.get(self.struct)
        if parent is None:
            return None  # no transaction block: the field is null
        value = parent.get(self.field) if self.in_struct else payload.get(self.field)
        if value == "false" and (self.struct, self.field) == ("source", "snapshot"):
            return None  # unset while streaming: the converter wrote the default, the SMT
            # reads the field without it (getWithoutDefault)
        return value


@dataclass(frozen=True, slots=True)
class _Shape:
    """What one envelope schema unwraps to, worked out once per table version."""

    row: dict[str, Any]  # the `after` field's schema
    out: dict[str, Any]  # the rewritten / extended record's schema
    fields: tuple[_Lookup, ...]
    headers: tuple[_Lookup, ...]
    defaults: tuple[tuple[str, Any], ...]  # (column, default) for the SMT's own replace


def _lookups(envelope: dict[str, Any], refs: tuple[FieldRef, ...]
             ) -> list[tuple[_Lookup, dict[str, Any]]]:
    """The refs found (FieldReference.getField: in the struct, else at the top; neither:
    left out, as there) with their field schemas."""
    out = []
    for ref in refs:
        parent = envelope if ref.struct is None else _member(envelope, ref.struct)
        schema = None if parent is None else _member(parent, ref.field)
        if schema is not None:
            out.append((_Lookup(ref.name, ref.struct, ref.field, True), schema))
        elif (schema := _member(envelope, ref.field)) is not None:
            out.append((_Lookup(ref.name, ref.struct, ref.field, False), schema))
    return out


class Unwrap:
    """ExtractNewRecordState on Connect-level records (envelope schema + payload)."""

    def __init__(self, settings: UnwrapSettings) -> None:
        self.settings = settings
        self._shapes: dict[int, tuple[dict[str, Any], _Shape]] = {}

    def _shape(self, envelope: dict[str, Any]) -> _Shape:
        cached = self._shapes.get(id(envelope))
        if cached is not None and cached[0] is envelope:
            return cached[1]
        s = self.settings
        row = _member(envelope, "after")
        assert row is not None, "an Envelope has an after field"
        row.pop("field")
        out = row
        if s.rewrites:  # Kafka's InsertField: a struct copy, then the field
            out = {"type": "struct", "fields": [*row["fields"], {
                "type": "string", "optional": True, "field": DELETED_FIELD}],
                **_basics(row, False)}
        fields = _lookups(envelope, s.add_fields)
        if s.add_fields:  # ExtractNewRecordState.makeUpdatedSchema: a copy, then the fields
            added = [{**_basics(schema, True), "field": at.name} for at, schema in fields]
            out = {"type": "struct", "fields": [*out["fields"], *added], **_basics(out, False)}
        defaults = tuple((f["field"], f["default"]) for f in row["fields"]
                         if f.get("default") is not None) if s.replace_null else ()
        shape = _Shape(row, out, tuple(at for at, _ in fields),
                       tuple(at for at, _ in _lookups(envelope, s.add_headers)), defaults)
        if len(self._shapes) >= 1024:
            self._shapes.clear()
        self._shapes[id(envelope)] = (envelope, shape)
        return shape

    def tombstone(self, delete_headers: Headers) -> Unwrapped | None:
        """A tombstone: kept only by rewrite-with-tombstone, with the headers added to its
        delete (`delete_headers`) and an `op` header saying d (so twice, as in Debezium)."""
        if self.settings.mode != "rewrite-with-tombstone":
            return None
        return Unwrapped(None, None, [*delete_headers, *((ref.name, b"d") for ref in
                                                         self.settings.add_headers
                                                         if ref.field == "op")])

    def change(self, envelope: dict[str, Any], payload: dict[str, Any]) -> Unwrapped | None:
        """A change record's row state as the SMT writes it; None when it drops it."""
        s = self.settings
        shape = self._shape(envelope)
        headers: Headers = [(at.name, header_value(at.value(payload))) for at in shape.headers]
        after, before = payload.get("after"), payload.get("before")
        if after is None:
            if before is None or s.mode == "drop":
                return None  # a truncate (none from MySQL) or a dropped delete
            if s.mode == "tombstone":
                return Unwrapped(shape.row, None, headers)
            if s.mode == "delete-to-tombstone":
                return Unwrapped(None, None, headers)
            row = self._rewritten(shape, before, "true")
        elif s.rewrites:
            row = self._rewritten(shape, after, "false")
        elif shape.fields:
            row = after
        else:
            return Unwrapped(shape.row, after, headers)
        for at in shape.fields:
            row[at.name] = at.value(payload)
        return Unwrapped(shape.out, row, headers)

    @staticmethod
    def _rewritten(shape: _Shape, row: dict[str, Any], deleted: str) -> dict[str, Any]:
        """InsertField's copy with `__deleted`: with the SMT's replace.null.with.default
        [true] a null takes its field's default (Struct.get), as the copy reads it."""
        out = dict(row)
        for name, default in shape.defaults:
            if out.get(name) is None:
                out[name] = default
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
        # A delete's tombstone shares its headers in Debezium (one headers object): the
        # headers the SMT added to the delete are on the tombstone too.
        self._last_delete: tuple[str, bytes | None, Headers] | None = None

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
        if value is None:
            last, self._last_delete = self._last_delete, None
            out = self._unwrap.tombstone(last[2] if last and last[:2] == (topic, key) else [])
        else:
            payload = table.decode_value(value)
            out = self._unwrap.change(table.value_schema, payload)
            self._last_delete = None if out is None or payload.get("after") is not None \
                else (topic, key, out.headers)
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

