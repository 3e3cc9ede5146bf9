"""A table's Avro change records, written by compiled code (connector/native/src/avro.rs).

Everything is decided here once per table, from the Avro schema `AvroCodec` registers: each
column's type as the writer takes it, its compiled conversion (as the JSON writer's), and a
fastavro writer of the column for the rare value the compiled one leaves to it (so the bytes
are always fastavro's). The source block changes
per event, not per row: fastavro writes it once per event, the writer puts `row` between.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from typing import Any

import fastavro

from connector.compiled import AvroRecords, AvroRows
from connector.events.converters import AvroCodec
from connector.events.source_block import SourceInfo, SourceStruct, event_key
from connector.events.types import WriterColumn

BatchTransaction = tuple[str, int, int]
"""A batch's transaction block: its id and the total and per-table counts before the batch."""

_PRIMITIVES = frozenset({"boolean", "int", "long", "float", "double", "string", "bytes"})
_ENVELOPE = ("before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns")


def _full_name(record: Mapping[str, Any]) -> str:
    namespace = record.get("namespace")
    return f"{namespace}.{record['name']}" if namespace else str(record["name"])


def describe(node: Any, named: dict[str, Any]) -> tuple[Any, ...]:
    """The compiled writer's description of an Avro type: ("long",), ("union", null index,
    type), ("array", items), ("record", [(name, type), ...]); `named` collects records."""
    if isinstance(node, list):
        if len(node) != 2 or "null" not in node:
            raise ValueError(f"no compiled Avro writer for the union {node!r}")
        null = node.index("null")
        return ("union", null, describe(node[1 - null], named))
    if isinstance(node, str):
        return (node,) if node in _PRIMITIVES else tuple(named[node])
    kind = node["type"]
    if kind == "record":
        fields = [(f["name"], describe(f["type"], named)) for f in node["fields"]]
        named[_full_name(node)] = ("record", fields)
        return ("record", fields)
    if kind == "array":
        return ("array", describe(node["items"], named))
    if kind in _PRIMITIVES:
        return (kind,)
    raise ValueError(f"no compiled Avro writer for {kind!r}")


def expand(node: Any, defined: dict[str, Any]) -> Any:
    """`node` standing alone: a named type it refers to is written out where it is used."""
    if isinstance(node, list):
        return [expand(n, defined) for n in node]
    if isinstance(node, str):
        return defined.get(node, node)
    if node.get("type") == "record":
        out = {**node, "fields": [{**f, "type": expand(f["type"], defined)}
                                  for f in node["fields"]]}
        defined[_full_name(node)] = out
        return out
    if node.get("type") == "array":
        return {**node, "items": expand(node["items"], defined)}
    return node


def fastavro_writer(schema: Any) -> Callable[[Any], bytes]:
    """fastavro's bytes of one value of `schema` (a column's type standing alone)."""
    parsed = fastavro.parse_schema(schema)

    def write(value: Any) -> bytes:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, value)
        return out.getvalue()
    return write


def row_writer(record: Mapping[str, Any], columns: list[WriterColumn]) -> AvroRows:
    """The compiled writer of `record` (an Avro record schema), one field per column."""
    fields = record["fields"]
    if [f["name"] for f in fields] != [c[0] for c in columns]:
        raise ValueError(f"{record['name']}: the Avro fields are not the columns")
    named: dict[str, Any] = {}
    defined: dict[str, Any] = {}
    return AvroRows([(name, describe(f["type"], named), convert, fallback,
                      fastavro_writer(expand(f["type"], defined)), compiled)
                     for f, (name, _, convert, fallback, compiled)
                     in zip(fields, columns, strict=True)])


def _check_envelope(avro: Mapping[str, Any]) -> None:
    """The envelope is written by fixed code: its schema must be the one that code writes."""
    types: dict[str, Any] = {f["name"]: f["type"] for f in avro["fields"]}
    if (tuple(types) != _ENVELOPE or types["op"] != "string"
            or any(types[t] != ["null", "long"] for t in _ENVELOPE[5:])
            or any(types[t][0] != "null" for t in ("before", "after", "transaction"))
            or [f["type"] for f in types["transaction"][1]["fields"]] != ["string", "long", "long"]
            or not isinstance(types["source"], dict)):
        raise ValueError(f"{avro['name']}: not the change envelope the Avro writer writes")


class AvroSource:
    """The source block's Avro bytes before and after `row`, written once per event."""

    __slots__ = ("_key", "_parsed", "_parts", "_struct", "_tail")

    def __init__(self, record: dict[str, Any], struct: SourceStruct) -> None:
        fields = record["fields"]
        at = [f["name"] for f in fields].index("row")
        if fields[at]["type"] != "int":
            raise ValueError("source.row: not the int the Avro writer puts between the parts")
        self._parsed = fastavro.parse_schema(record)
        self._tail = fastavro.parse_schema(
            {"type": "record", "name": "SourceTail", "fields": fields[at + 1:]})
        self._struct = struct
        self._key: tuple[Any, ...] | None = None
        self._parts = (b"", b"")

    def parts(self, s: SourceInfo) -> tuple[bytes, bytes]:
        key = event_key(s)
        if key != self._key:
            block = self._struct(s)
            block["row"] = 0  # one byte: 0x00
            whole, tail = io.BytesIO(), io.BytesIO()
            fastavro.schemaless_writer(whole, self._parsed, block)
            fastavro.schemaless_writer(tail, self._tail, block)
            at = len(whole.getvalue()) - len(tail.getvalue()) - 1
            self._parts = (whole.getvalue()[:at], tail.getvalue())
            self._key = key
        return self._parts


class AvroTable:
    """A table's Avro value records (with `value_codec`) and key records (with `key_codec`)."""

    __slots__ = ("_key_codec", "_key_rows", "_records", "_source", "_value_codec")

    def __init__(self, codecs: tuple[AvroCodec | None, AvroCodec | None],
                 columns: tuple[list[WriterColumn], list[WriterColumn]],
                 source: SourceStruct) -> None:
        self._key_codec, self._value_codec = codecs
        self._key_rows = None
        if self._key_codec is not None:
            self._key_rows = row_writer(self._key_codec.avro, columns[1])
        self._records: AvroRecords | None = None
        self._source: AvroSource | None = None
        if self._value_codec is not None:
            avro = self._value_codec.avro
            _check_envelope(avro)
            fields = {f["name"]: f["type"] for f in avro["fields"]}
            self._records = AvroRecords(row_writer(fields["before"][1], columns[0]),
                                        self._key_rows)
            self._source = AvroSource(fields["source"], source)

    def key(self, row: Mapping[str, Any]) -> bytes:
        assert self._key_rows is not None and self._key_codec is not None
        return self._key_rows.record(self._key_codec.header, row)

    def value(self, op: str, before: Mapping[str, Any] | None,
              after: Mapping[str, Any] | None, source: SourceInfo, ts_ms: int,
              transaction: Mapping[str, Any] | None) -> bytes:
        assert self._records is not None and self._source is not None
        assert self._value_codec is not None
        head, tail = self._source.parts(source)
        tx = None if transaction is None else (
            transaction["id"], transaction["total_order"], transaction["data_collection_order"])
        return self._records.value(self._value_codec.header, op, before, after, head, tail,
                                   source.row, ts_ms, tx)

    def records(self, op: str, rows: list[Any], source: SourceInfo, ts_ms: int,
                transaction: BatchTransaction | None,
                first: int) -> list[tuple[bytes | None, bytes]]:
        """As json.rs's `TableRecords.records`; keys are None unless the key is Avro."""
        assert self._records is not None and self._source is not None
        assert self._value_codec is not None
        head, tail = self._source.parts(source)
        key_header = None if self._key_codec is None else self._key_codec.header
        return self._records.records((key_header, self._value_codec.header), op, rows, head,
                                     tail, ts_ms, transaction, first)
