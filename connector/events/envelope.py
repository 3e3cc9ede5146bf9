"""Debezium records: change envelopes per table, heartbeats, schema changes, transactions.

Schemas, codecs and the compiled record writers are built once per `TableSchema` (cached); the
change records are written a rows event at a time (JSON: native json.rs, Avro: avro.rs through
avro_writer.py). Shapes follow Debezium 3.x MySQL output (Envelope schema version 2).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from connector.compiled import RowWriter, TableRecords
from connector.events.avro_writer import AvroTable, BatchTransaction
from connector.events.column_mappers import ColumnMappers
from connector.events.column_selection import ColumnSelection
from connector.events.converters import (
    AvroCodec,
    Codec,
    CodecFactory,
    JsonCodec,
    SchemaIdLookup,
    dumps,
)
from connector.events.header_text import struct_text
from connector.events.history import CHANGE_SCHEMA
from connector.events.source_block import (
    TRANSACTION_BLOCK,
    SourceInfo,
    SourceStruct,
    source_schema,
)
from connector.events.source_block import schema_field as _f
from connector.events.types import (
    FieldMapping,
    RowConverter,
    WriterColumn,
    connect_field,
    field_mapping,
)
from connector.schema import Column, TableSchema
from connector.settings.model import ConnectorConfig

Record = tuple[str, bytes | None, bytes | None]


log = logging.getLogger(__name__)

@dataclass(frozen=True, slots=True)
class RowEncoding:
    """What the chunk reader process needs to encode a table's rows as its encoder here would:
    the table as the encoder holds it (enriched) and the key columns."""

    schema: TableSchema
    key_columns: tuple[str, ...]


ReadRow = tuple[bytes | None, bytes]
"""A snapshot row encoded ahead, in the chunk reader: its key record and its `after` JSON."""


_INVALID_TOPIC_CHARS = re.compile(r"[^A-Za-z0-9._-]")


def topic_name(*parts: str) -> str:
    """Debezium's topic naming: parts joined by '.', any other invalid character as '_'."""
    return _INVALID_TOPIC_CHARS.sub("_", ".".join(parts))




def _supported(schema: TableSchema, columns: list[Column], dec: str, tpm: str) -> list[Column]:
    """Columns whose type has a mapping; the others are left out with one warning each."""
    kept = []
    for column in columns:
        try:
            field_mapping(column, dec, tpm)
        except ValueError as exc:
            log.warning("%s.%s: %s; the column is left out of its events", schema.db,
                        schema.table, exc)
            continue
        kept.append(column)
    return kept


def _writer_columns(columns: list[Column], mappings: list[FieldMapping]) -> list[WriterColumn]:
    return [(c.name, str(m.schema.get("type")), m.convert, m.fallback, m.compiled)
            for c, m in zip(columns, mappings, strict=True)]


def _row_writer(columns: list[WriterColumn]) -> RowWriter:
    """The compiled JSON writer of these columns' converted values (one object per row)."""
    return RowWriter([(name, convert, fallback, compiled)
                      for name, _, convert, fallback, compiled in columns], dumps)


# Records written per call: a 2,000-row event's 3 KB records all alive at once cost more in
# page faults than the calls saved (bench/encode.py); 64 stay within malloc's reused memory.
RECORDS_AT_ONCE = 64

class TableEncoder:
    """Key and value serialization for one table at one schema version."""

    def __init__(self, config: ConnectorConfig, codecs: CodecFactory, source: SourceStruct,
                 schema: TableSchema, key_columns: tuple[str, ...],
                 shape: tuple[ColumnSelection, ColumnMappers]) -> None:
        prefix = config.topic_prefix
        self.topic = topic_name(prefix, schema.db, schema.table)
        self.schema = schema
        self.key_columns = key_columns
        selection, mappers = shape
        dec, tpm = config.decimal_handling_mode, config.time_precision_mode
        value_cols = _supported(schema, selection.value_columns(schema), dec, tpm)
        value_maps = [codecs.as_written("value", mappers.value_mapping(
            schema.db, schema.table, c, field_mapping(c, dec, tpm))) for c in value_cols]
        self._row = RowConverter(value_cols, value_maps)
        row_schema = {
            "type": "struct", "fields": [connect_field(c, m) for c, m in zip(value_cols,
                                                                             value_maps)],
            "optional": True, "name": f"{self.topic}.Value",
        }
        envelope = {
            "type": "struct",
            "fields": [
                {**row_schema, "field": "before"}, {**row_schema, "field": "after"},
                {**source_schema(config.flavour), "field": "source"},
                {**TRANSACTION_BLOCK, "field": "transaction"},
                _f("string", "op"), _f("int64", "ts_ms", True), _f("int64", "ts_us", True),
                _f("int64", "ts_ns", True),
            ],
            "optional": False, "name": f"{self.topic}.Envelope", "version": 2,
        }
        self.value_schema = envelope
        self._value_codec: Codec = codecs.codec("value", self.topic, envelope)
        self._source = source
        # JSON: the records are written by compiled code (connector/native), a batch at a time.
        self._value_json = isinstance(self._value_codec, JsonCodec)
        # What the writers are built from (the reference encoder in tests/ reads it).
        self.writer_columns: tuple[list[WriterColumn], list[WriterColumn]] = (
            _writer_columns(value_cols, value_maps), [])
        self._value_rows = _row_writer(self.writer_columns[0])
        self._key: RowConverter | None = None
        self._key_codec: Codec | None = None
        self._key_json = True  # no key columns: a null key, whatever the converter
        self.key_schema: dict[str, Any] | None = None
        key_rows: RowWriter | None = None
        if key_columns:
            key_cols = [schema.column(n) for n in key_columns]
            key_maps = [codecs.as_written("key", field_mapping(c, dec, tpm)) for c in key_cols]
            self._key = RowConverter(key_cols, key_maps)
            self.key_schema = {
                "type": "struct",
                "fields": [connect_field(c, m) for c, m in zip(key_cols, key_maps)],
                "optional": False, "name": f"{self.topic}.Key",
            }
            self._key_codec = codecs.codec("key", self.topic, self.key_schema)
            self._key_json = isinstance(self._key_codec, JsonCodec)
            self.writer_columns[1].extend(_writer_columns(key_cols, key_maps))
            if self._key_json:
                key_rows = _row_writer(self.writer_columns[1])
        key_json, value_json = self._key_codec, self._value_codec
        self._records_prefix = value_json.prefix if isinstance(value_json, JsonCodec) else b""
        self._records = TableRecords(
            self._value_rows, self._records_prefix, key_rows,
            key_json.prefix if isinstance(key_json, JsonCodec) else b"",
            (isinstance(key_json, JsonCodec) and key_json.schemas,
             isinstance(value_json, JsonCodec) and value_json.schemas))
        # Avro: the records are written by compiled code too (avro_writer.py).
        avro = (key_json if isinstance(key_json, AvroCodec) else None,
                value_json if isinstance(value_json, AvroCodec) else None)
        self._avro = AvroTable(avro, self.writer_columns, source) \
            if avro != (None, None) else None

    def decode_value(self, raw: bytes) -> dict[str, Any]:
        """The payload of a value this encoder wrote (a transform reads it back)."""
        return self._value_codec.decode(raw)

    def key_values(self, row: dict[str, Any]) -> tuple[Any, ...]:
        """The raw key tuple (as decoded) for snapshot windows and deduplication."""
        return tuple(row[n] for n in self.key_columns)

    def key(self, row: dict[str, Any]) -> bytes | None:
        if self._key_json:
            return self._records.key(row)  # None without key columns, as Debezium's
        assert self._avro is not None
        return self._avro.key(row)

    def key_header(self, row: dict[str, Any]) -> bytes | None:
        """The key as Debezium's `__debezium.newkey`/`oldkey` header holds it: written by
        Connect's default header.converter (SimpleHeaderConverter), whatever the key's."""
        if self._key is None or self.key_schema is None:
            return None
        return struct_text(self.key_schema, self._key(row))

    @property
    def row_encoding(self) -> RowEncoding | None:
        """How the chunk reader rebuilds this encoder; None unless key and value are JSON
        (an Avro schema id is this process's registry lookup)."""
        if not (self._value_json and self._key_json):
            return None
        return RowEncoding(self.schema, self.key_columns)

    def read_row(self, row: dict[str, Any]) -> ReadRow:
        """A snapshot row's key record and `after` JSON (see `row_encoding`, `read_framing`)."""
        return self.key(row), self._value_rows.row(row)

    def read_framing(self, source: SourceInfo, ts_ms: int) -> tuple[bytes, bytes]:
        """The op=r record's bytes around a `read_row` `after`: joined, they are the bytes
        `value("r", None, row, source, ts_ms)` gives (one framing for a whole chunk)."""
        assert self._value_json, "read_row is for JSON encoders only"
        record = self.value("r", None, None, source, ts_ms)
        at = len(self._records_prefix) + len(b'{"before":null,"after":')
        return record[:at], record[at + len(b"null"):]

    def value(self, op: str, before: dict[str, Any] | None, after: dict[str, Any] | None,
              source: SourceInfo, ts_ms: int,
              transaction: dict[str, Any] | None = None) -> bytes:
        if self._value_json:
            head, tail = self._source.json_parts(source)
            return self._records.value(op, before, after, head, tail, source.row, ts_ms,
                                       None if transaction is None else dumps(transaction))
        assert self._avro is not None
        return self._avro.value(op, before, after, source, ts_ms, transaction)

    def records(self, op: str, rows: list[Any], source: SourceInfo, ts_ms: int,
                transaction: BatchTransaction | None) -> Iterator[tuple[bytes | None, bytes]]:
        """The (key, value) records of one rows event: `op` c or r (after images), d (before
        images) or u ((before, after) pairs whose key is unchanged); row i is source.row i."""
        if self._value_json and self._key_json:
            head, tail = self._source.json_parts(source)
            write = self._records.records
            for lo in range(0, len(rows), RECORDS_AT_ONCE):
                yield from write(op, rows[lo:lo + RECORDS_AT_ONCE], head, tail, ts_ms,
                                 transaction, lo)
            return
        if self._avro is not None and not self._value_json and \
                (self._key is None or not self._key_json):
            for lo in range(0, len(rows), RECORDS_AT_ONCE):
                yield from self._avro.records(op, rows[lo:lo + RECORDS_AT_ONCE], source, ts_ms,
                                              transaction, lo)
            return
        for index, row in enumerate(rows):
            source.row = index
            before, after = (None, row) if op in ("c", "r") else (row, None) if op == "d" \
                else row
            tx = None if transaction is None else {
                "id": transaction[0], "total_order": transaction[1] + index + 1,
                "data_collection_order": transaction[2] + index + 1}
            keyed = after if after is not None else before
            assert keyed is not None
            yield self.key(keyed), self.value(op, before, after, source, ts_ms, tx)

    def row_values(self, row: dict[str, Any]) -> dict[str, Any]:
        """The converted column values of `row` as they appear in `before`/`after`."""
        return self._row(row)


HEARTBEAT_KEY = {"type": "struct", "fields": [_f("string", "serverName")], "optional": False,
                 "name": "io.debezium.connector.common.ServerNameKey", "version": 1}
HEARTBEAT_VALUE = {"type": "struct", "fields": [_f("int64", "ts_ms")], "optional": False,
                   "name": "io.debezium.connector.common.Heartbeat", "version": 1}
TX_KEY = {"type": "struct", "fields": [_f("string", "id")], "optional": False,
          "name": "io.debezium.connector.common.TransactionMetadataKey", "version": 1}
TX_COLLECTION = {"type": "struct", "fields": [_f("string", "data_collection"),
                                              _f("int64", "event_count")],
                 "optional": True, "name": "event.collection", "version": 1}
TX_VALUE = {
    "type": "struct",
    "fields": [
        _f("string", "status"), _f("string", "id"), _f("int64", "event_count", True),
        {"type": "array", "items": TX_COLLECTION, "optional": True, "field": "data_collections"},
        _f("int64", "ts_ms"),
    ],
    "optional": False, "name": "io.debezium.connector.common.TransactionMetadataValue",
    "version": 1,
}


class EventEncoder:
    """Entry point: one per connector; hands out cached `TableEncoder`s."""

    def __init__(self, config: ConnectorConfig, schema_ids: SchemaIdLookup | None = None,
                 enrich: Callable[[TableSchema], TableSchema] | None = None) -> None:
        self.config = config
        # Adds what the binlog lacks (column DEFAULTs...) to a new table version; off the hot
        # path: called once per version.
        self._enrich = enrich
        self._codecs = CodecFactory(config, schema_ids)
        self._source = SourceStruct(config.flavour, config.topic_prefix, "false"
                                     if self._codecs.null_writes_default("value") else None)
        # column.include/exclude.list, message.key.columns and the column mappers
        self._shape = (ColumnSelection(config), ColumnMappers(config))
        self._tables: dict[tuple[TableSchema, tuple[str, ...] | None], TableEncoder] = {}
        # Hashing a TableSchema (every column) per event cost more than encoding a small row.
        self._last: tuple[TableSchema, tuple[str, ...] | None, TableEncoder] | None = None
        self._by_topic: dict[str, TableEncoder] = {}
        flavour = config.flavour
        self._hb = (self._codecs.codec("key", config.heartbeat_topic, HEARTBEAT_KEY),
                    self._codecs.codec("value", config.heartbeat_topic, HEARTBEAT_VALUE))
        self._tx = (self._codecs.codec("key", config.transaction_topic, TX_KEY),
                    self._codecs.codec("value", config.transaction_topic, TX_VALUE))
        change_key = {"type": "struct", "fields": [_f("string", "databaseName")],
                      "optional": False, "version": 1,
                      "name": f"io.debezium.connector.{flavour}.SchemaChangeKey"}
        change_value = {
            "type": "struct",
            "fields": [
                {**source_schema(flavour), "field": "source"}, _f("int64", "ts_ms"),
                _f("string", "databaseName", True), _f("string", "schemaName", True),
                _f("string", "ddl", True),
                {"type": "array", "items": CHANGE_SCHEMA, "optional": False,
                 "field": "tableChanges"},
            ],
            "optional": False, "version": 1,
            "name": f"io.debezium.connector.{flavour}.SchemaChangeValue",
        }
        self._change = (self._codecs.codec("key", config.topic_prefix, change_key),
                        self._codecs.codec("value", config.topic_prefix, change_value))

    def table(self, schema: TableSchema,
              key_columns: tuple[str, ...] | None = None) -> TableEncoder:
        """The encoder for `schema`; `key_columns` overrides the primary key (surrogate key)."""
        last = self._last
        if last is not None and last[0] is schema and last[1] == key_columns:
            return last[2]  # the reader hands out one TableSchema object per version
        cache_key = (schema, key_columns)
        encoder = self._tables.get(cache_key)
        if encoder is None:
            keys = tuple(key_columns) if key_columns else self._shape[0].key_columns(schema)
            full = schema if self._enrich is None else self._enrich(schema)
            encoder = TableEncoder(self.config, self._codecs, self._source, full, keys,
                                   self._shape)
            if len(self._tables) >= 4096:  # old schema versions after many DDLs
                self._tables.clear()
            self._tables[cache_key] = encoder
        self._last = (schema, key_columns, encoder)
        self._by_topic[encoder.topic] = encoder
        return encoder

    def for_topic(self, topic: str) -> TableEncoder | None:
        """The encoder that wrote the last change record of `topic`; None for other topics."""
        return self._by_topic.get(topic)

    def forget(self, table_id: str) -> None:
        """Drop the encoders of `table_id` after a DDL (a new DEFAULT keeps the row image)."""
        self._tables = {k: v for k, v in self._tables.items() if k[0].id != table_id}
        self._last = None

    def heartbeat(self, ts_ms: int) -> Record:
        key, value = self._hb
        return (self.config.heartbeat_topic,
                key.encode({"serverName": self.config.topic_prefix}),
                value.encode({"ts_ms": ts_ms}))

    def schema_change(self, source: SourceInfo, ddl: str, db: str,
                      table_changes: list[dict[str, Any]]) -> Record:
        key, value = self._change
        payload = {"source": self._source(source), "ts_ms": source.ts_us // 1000,
                   "databaseName": db, "schemaName": None, "ddl": ddl, "tableChanges": table_changes}
        return (self.config.topic_prefix, key.encode({"databaseName": db}),
                value.encode(payload))

    def transaction(self, status: str, txid: str, ts_ms: int, event_count: int,
                    per_table: dict[str, int]) -> Record:
        key, value = self._tx
        end = status == "END"
        payload = {
            "status": status, "id": txid, "event_count": event_count if end else None,
            "data_collections": [{"data_collection": t, "event_count": n}
                                 for t, n in per_table.items()] if end else None,
            "ts_ms": ts_ms,
        }
        return (self.config.transaction_topic, key.encode({"id": txid}), value.encode(payload))
