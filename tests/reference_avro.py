"""The Python Avro record writer the compiled one (connector/native/src/avro.rs) replaced.

Kept as the oracle of the differential test: each row's columns converted into a payload
dict (as `RowConverter` does), the envelope's dict around them, written by fastavro.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from connector.events.converters import AvroCodec, CodecFactory, SchemaIdLookup
from connector.events.envelope import TableEncoder
from connector.events.source_block import SourceInfo, SourceStruct
from connector.events.types import FieldMapping, RowConverter, WriterColumn
from connector.schema import Column
from connector.settings.model import ConnectorConfig


def payload_row(columns: Iterable[WriterColumn]) -> RowConverter:
    """Row dict -> its converted columns, by the `RowConverter` the encoder used (only the
    names, converters and fallbacks matter to it)."""
    plan = list(columns)
    return RowConverter([Column(name, connect_type) for name, connect_type, *_ in plan],
                        [FieldMapping({}, convert, fallback) for _, _, convert, fallback, _ in plan])


class ReferenceAvro:
    """Key and value records of one table as the Python encoder wrote them (Avro only)."""

    def __init__(self, config: ConnectorConfig, table: TableEncoder,
                 lookup: SchemaIdLookup) -> None:
        value_columns, key_columns = table.writer_columns
        self._row = payload_row(value_columns)
        self._key_row = payload_row(key_columns)
        self.value_codec = AvroCodec(table.value_schema, f"{table.topic}-value", lookup)
        self.key_codec = (AvroCodec(table.key_schema, f"{table.topic}-key", lookup)
                          if table.key_schema is not None else None)
        streaming = "false" if CodecFactory(config, lookup).null_writes_default("value") \
            else None
        self._source = SourceStruct(config.flavour, config.topic_prefix, streaming)

    def key(self, row: Mapping[str, Any]) -> bytes | None:
        if self.key_codec is None:
            return None
        return self.key_codec.encode(self._key_row(row))

    def payload(self, op: str, before: Mapping[str, Any] | None,
                after: Mapping[str, Any] | None, source: SourceInfo, ts_ms: int,
                transaction: dict[str, Any] | None) -> dict[str, Any]:
        return {
            "before": None if before is None else self._row(before),
            "after": None if after is None else self._row(after),
            "source": self._source(source), "transaction": transaction, "op": op,
            "ts_ms": ts_ms, "ts_us": ts_ms * 1000, "ts_ns": ts_ms * 1_000_000,
        }

    def value(self, op: str, before: Mapping[str, Any] | None,
              after: Mapping[str, Any] | None, source: SourceInfo, ts_ms: int,
              transaction: dict[str, Any] | None) -> bytes:
        out = self.value_codec.encode(self.payload(op, before, after, source, ts_ms,
                                                   transaction))
        assert out is not None
        return out
