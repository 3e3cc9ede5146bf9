"""Kafka Connect converters: JsonConverter (with or without schemas) and Confluent's Avro.

A `Codec` is built once per (topic, Connect schema) and then only serializes payloads: the JSON
codec's schema part is serialized once; change records are written around it by compiled code
(connector/native) and the other records by splicing each payload in. Avro change records are
compiled code's too (avro_writer.py, from the codec's schema and framing); fastavro writes the
other Avro records and reads them all back.
"""

from __future__ import annotations

import binascii
import io
import json
from collections.abc import Callable
from typing import Any, Protocol

from connector.events.avro import avro_schema
from connector.events.types import FieldMapping
from connector.settings.model import AVRO_CONVERTER, JSON_CONVERTER, ConnectorConfig

MAGIC_BYTE = b"\x00"

SchemaIdLookup = Callable[[str, str], int]
"""(subject, Avro schema JSON) -> schema id; normally the Schema Registry's register call."""


class Codec(Protocol):
    def encode(self, payload: dict[str, Any] | None) -> bytes | None: ...

    def encode_null(self) -> bytes | None:
        """A null value with this schema (not a tombstone's null schema, see unwrap.py)."""

    def decode(self, raw: bytes) -> dict[str, Any]:
        """The payload of a record this codec encoded."""


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        # JsonConverter writes bytes as base64 (binascii: base64.b64encode is its wrapper)
        return binascii.b2a_base64(value, newline=False).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False,
                          default=_json_default).encode


def dumps(value: Any) -> str:
    """Compact JSON as Kafka Connect writes it (bytes become base64 strings)."""
    return _dumps(value)


class JsonCodec:
    """JsonConverter: `{"schema":...,"payload":...}` when schemas are enabled, else payload."""

    __slots__ = ("_prefix", "_prefix_bytes", "_schemas")

    def __init__(self, schema: dict[str, Any], schemas_enable: bool) -> None:
        self._schemas = schemas_enable
        self._prefix = ('{"schema":' + dumps(schema) + ',"payload":') if schemas_enable else ""
        self._prefix_bytes = self._prefix.encode("utf-8")

    def encode(self, payload: dict[str, Any] | None) -> bytes | None:
        if payload is None:
            return None  # JsonConverter turns a null value (tombstone) into null bytes
        if self._schemas:
            return (self._prefix + _dumps(payload) + "}").encode("utf-8")
        return _dumps(payload).encode("utf-8")

    def encode_null(self) -> bytes:
        """JsonConverter's bytes for a null value whose schema is not null."""
        return self._prefix_bytes + b"null}" if self._schemas else b"null"

    def decode(self, raw: bytes) -> dict[str, Any]:
        if not self._schemas:
            return dict(json.loads(raw))
        if raw.startswith(self._prefix_bytes):  # the schema part is ours: skip parsing it
            return dict(json.loads(raw[len(self._prefix_bytes):-1]))
        return dict(json.loads(raw)["payload"])

    @property
    def prefix(self) -> bytes:
        """The bytes before each payload (the schema part), empty without schemas."""
        return self._prefix_bytes

    @property
    def schemas(self) -> bool:
        return self._schemas


class AvroCodec:
    """Confluent wire format: magic byte 0, 4-byte big-endian schema id, Avro binary body."""

    __slots__ = ("_avro", "_header", "_lookup", "_parsed", "_schema_json", "_subject")

    def __init__(self, schema: dict[str, Any], subject: str, lookup: SchemaIdLookup) -> None:
        import fastavro

        avro = avro_schema(schema)
        self._avro = avro
        self._schema_json = json.dumps(avro, separators=(",", ":"))
        self._parsed = fastavro.parse_schema(avro)
        self._subject = subject
        self._lookup = lookup
        self._header: bytes | None = None

    @property
    def avro_schema_json(self) -> str:
        return self._schema_json

    @property
    def avro(self) -> Any:
        """The Avro schema registered (JSON-ready; the compiled writer is built from it)."""
        return self._avro

    @property
    def header(self) -> bytes:
        """Magic byte and schema id: the schema is registered at the first record written."""
        if self._header is None:
            schema_id = self._lookup(self._subject, self._schema_json)
            self._header = MAGIC_BYTE + schema_id.to_bytes(4, "big")
        return self._header

    def encode(self, payload: dict[str, Any] | None) -> bytes | None:
        import fastavro

        if payload is None:
            return None
        out = io.BytesIO()
        out.write(self.header)
        fastavro.schemaless_writer(out, self._parsed, payload)
        return out.getvalue()

    def encode_null(self) -> None:
        """AvroConverter serializes a null value as null: a tombstone."""

    def decode(self, raw: bytes) -> dict[str, Any]:
        import fastavro

        record = fastavro.schemaless_reader(io.BytesIO(raw[5:]), self._parsed, None)
        assert isinstance(record, dict)
        return record


def registry_lookup(url: str) -> SchemaIdLookup:
    """Register schemas with a Confluent Schema Registry (ids cached by the client)."""
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    client = SchemaRegistryClient({"url": url})

    def lookup(subject: str, schema_json: str) -> int:
        return int(client.register_schema(subject, Schema(schema_json, "AVRO")))
    return lookup


class CodecFactory:
    """Chooses key and value codecs from key.converter / value.converter settings."""

    def __init__(self, config: ConnectorConfig, lookup: SchemaIdLookup | None = None) -> None:
        self._config = config
        self._lookup = lookup
        self._lookups: dict[str, SchemaIdLookup] = {}
        for kind, converter in (("key", config.key_converter), ("value", config.value_converter)):
            if converter not in (JSON_CONVERTER, AVRO_CONVERTER):
                raise ValueError(f"{kind}.converter: unsupported converter {converter!r} "
                                 f"(use {JSON_CONVERTER} or {AVRO_CONVERTER})")
            if converter == AVRO_CONVERTER and lookup is None and not self._url(kind):
                raise ValueError(f"{kind}.converter.schema.registry.url: required for Avro")

    def _url(self, kind: str) -> str | None:
        c = self._config
        return c.key_schema_registry_url if kind == "key" else c.value_schema_registry_url

    def _registry(self, kind: str) -> SchemaIdLookup:
        if self._lookup is not None:
            return self._lookup
        url = self._url(kind)
        assert url is not None
        if url not in self._lookups:
            self._lookups[url] = registry_lookup(url)
        return self._lookups[url]

    def null_writes_default(self, kind: str) -> bool:
        """Whether the `kind` converter writes a field's schema default for a null value:
        JsonConverter's `replace.null.with.default` [true]; Confluent's AvroConverter unless
        `ignore.default.for.nullables` (both read the value with Kafka's `Struct.get`)."""
        c = self._config
        if (c.key_converter if kind == "key" else c.value_converter) == AVRO_CONVERTER:
            return not (c.key_ignore_default_for_nullables if kind == "key"
                        else c.value_ignore_default_for_nullables)
        return c.key_replace_null if kind == "key" else c.value_replace_null

    def as_written(self, kind: str, mapping: FieldMapping) -> FieldMapping:
        """`mapping` with a null value written as the converter writes it: the field's
        default when it has one and the converter replaces nulls (see null_writes_default)."""
        if "default" not in mapping.schema or not self.null_writes_default(kind):
            return mapping
        return mapping.with_convert(mapping.schema, mapping.convert, mapping.schema["default"])

    def codec(self, kind: str, topic: str, schema: dict[str, Any]) -> Codec:
        c = self._config
        converter = c.key_converter if kind == "key" else c.value_converter
        if converter == AVRO_CONVERTER:
            return AvroCodec(schema, f"{topic}-{kind}", self._registry(kind))
        enabled = c.key_schemas_enable if kind == "key" else c.value_schemas_enable
        return JsonCodec(schema, enabled)
