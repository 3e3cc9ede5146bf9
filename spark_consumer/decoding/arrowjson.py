"""Decode a whole offset range with Arrow's JSON reader: no Python object per record.

Measured in a Spark task (50,000 records of three columns): the orjson path spent 1.0-1.6 s of
CPU, 0.4 s of it decoding and the rest in the page faults of the fresh memory its 100,000
dicts take (~3.5 µs each on these VMs); this path spends ~0.15 s. It takes the records the
connector and Debezium write for scalar columns. For anything else (a struct kept as JSON
text, two key schemas in a range, a value Arrow's reader reads another way than orjson)
it raises `Fallback` and the orjson path decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from spark_consumer.decoding.arrowtypes import Unsupported, column
from spark_consumer.decoding.columnar import (
    OP_COLUMN,
    ColumnarDecoder,
    Decoded,
    Fallback,
    RawRecord,
)
from spark_consumer.decoding.dbztypes import (
    PLAIN,
    ColumnSpec,
    SchemaError,
    specs_from_struct_schema,
)
from spark_consumer.decoding.decode import OPS, Shape, field_schema
from spark_consumer.decoding.envelope import Envelopes

# The JSON type Arrow reads a column's values as, by conversion or (PLAIN) Spark type; the
# column's own conversion (`arrowtypes.column`) then makes them what the row path makes them.
_JSON_TYPES = {"int": pa.int64(), "bigint": pa.int64(), "float": pa.float64(),
               "double": pa.float64(), "boolean": pa.bool_(), "string": pa.string()}
_JSON_BY_CONVERSION = {"date_days": pa.int64(), "ts_millis": pa.int64(),
                       "ts_micros": pa.int64(), "ts_nanos": pa.int64(), "ts_iso": pa.string(),
                       "decimal_b64": pa.string(), "bytes_b64": pa.string()}
# Read as they are: Arrow's JSON reader already gives what `column` would.
_AS_READ = frozenset({"bigint", "double", "boolean", "string"})
_INT32 = (-(1 << 31), (1 << 31) - 1)
# Bare tokens Arrow's reader takes as numbers (NaN, Inf, -Inf, Infinity) and orjson or the row
# path's `json` refuse or read otherwise; in the text at all, they are checked in value place.
_NOT_JSON_TOKENS = (b"NaN", b"Inf")
_NOT_JSON = re.compile(rb"[:\[,-][ \t]*(?:NaN|Inf)")
_SEQ = "__gtidmark_seq"


def _json_type(spec: ColumnSpec) -> pa.DataType:
    found = _JSON_TYPES.get(spec.spark_type) if spec.conversion == PLAIN \
        else _JSON_BY_CONVERSION.get(spec.conversion)
    if found is None:
        raise Fallback(f"column {spec.name}: {spec.conversion} {spec.spark_type}")
    return found


def _specs(schema: dict[str, Any] | None) -> tuple[ColumnSpec, ...]:
    try:
        specs = tuple(specs_from_struct_schema(schema))
    except SchemaError as exc:
        raise Fallback(f"schema: {exc}") from None
    names = [OP_COLUMN, *(s.name for s in specs)]
    if len(set(names)) != len(names):
        raise Fallback("duplicate field names")
    return specs


def _struct(specs: tuple[ColumnSpec, ...]) -> pa.DataType:
    return pa.struct([(s.name, _json_type(s)) for s in specs])


def _read(lines: list[bytes], schema: pa.Schema, extra_fields: str = "ignore") -> pa.Table:
    """One row per line, typed by `schema`, or Fallback.

    Every line starts with `{`, so each gives at least one row, and the reader must give as
    many rows as there are lines: a record holding two objects, or none, cannot shift rows
    onto other records."""
    text = b"\n".join(lines)
    if text.count(b"\n") != len(lines) - 1 or b"\r" in text or b"\x00" in text:
        raise Fallback("a line break or NUL in a record's JSON")
    if not text.startswith(b"{") or text.count(b"\n{") != len(lines) - 1:
        raise Fallback("a record whose payload is not one JSON object")
    if any(token in text for token in _NOT_JSON_TOKENS) and _NOT_JSON.search(text):
        raise Fallback("NaN or Inf in the range's JSON")
    try:
        text.decode()  # Arrow's reader keeps bytes that are not UTF-8 in its strings
    except UnicodeDecodeError:
        raise Fallback("a record that is not UTF-8") from None
    try:
        table = pj.read_json(
            pa.py_buffer(text),
            read_options=pj.ReadOptions(use_threads=False, block_size=len(text) + 1),
            parse_options=pj.ParseOptions(explicit_schema=schema,
                                          unexpected_field_behavior=extra_fields))
    except pa.ArrowException as exc:
        raise Fallback(f"Arrow's JSON reader: {str(exc)[:200]}") from None
    if table.num_rows != len(lines):
        raise Fallback("a record holding more than one JSON value")
    return table


def _convert(spec: ColumnSpec, values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A column read as JSON -> the Arrow array of its Spark type, as `column` makes it."""
    array = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if spec.conversion == PLAIN and spec.spark_type in _AS_READ:
        return array
    if spec.conversion == PLAIN and spec.spark_type == "int":
        bounds = pc.min_max(array)
        if bounds["min"].is_valid and not (_INT32[0] <= bounds["min"].as_py()
                                           and bounds["max"].as_py() <= _INT32[1]):
            raise Fallback(f"column {spec.name}: beyond int")
        return array.cast(pa.int32())
    try:
        return column(spec, array.to_pylist())
    except Unsupported as exc:
        raise Fallback(str(exc)) from None


@dataclass
class _Group:
    """The records of one value schema text: their sequence numbers and payload texts."""

    schema: dict[str, Any]
    seqs: list[int] = field(default_factory=list)
    lines: list[bytes] = field(default_factory=list)


class ArrowRangeDecoder(ColumnarDecoder):
    """Decodes the records of one topic partition range (one Spark task), like `RangeDecoder`."""

    def __init__(self, topic: str) -> None:
        self.topic = topic

    def _decode(self, records: Iterable[RawRecord]) -> Decoded:
        values, keys = Envelopes(), Envelopes()
        groups: dict[int, _Group] = {}
        key_lines: list[bytes] = []
        count = tombstones = 0
        # The schema texts of the record before, tried first: a range rarely changes them.
        value_prefix: bytes | None = None
        key_prefix: bytes | None = None
        group = _Group({})
        for _, _, _, key, value in records:
            count += 1
            if value is None:
                tombstones += 1
                continue
            if value_prefix is not None and value.startswith(value_prefix) \
                    and value.endswith(b"}"):
                payload = value[len(value_prefix):-1]
            else:
                payload, schema, index = values.payload_text(value)
                value_prefix = values.prefixes[index][0]
                group = groups.setdefault(index, _Group(schema))
            if payload == b"null":
                tombstones += 1
                continue
            if key is None:
                raise Fallback("a change without a key")
            if key_prefix is not None and key.startswith(key_prefix) and key.endswith(b"}"):
                key_payload = key[len(key_prefix):-1]
            else:
                key_payload, _, key_index = keys.payload_text(key)
                if key_index:
                    raise Fallback("more than one key schema in the range")
                key_prefix = keys.prefixes[0][0]
            group.seqs.append(len(key_lines))
            group.lines.append(payload)
            key_lines.append(key_payload)
        if not key_lines:
            return Decoded([], [], count, tombstones, 0, 0)
        return self._tables(list(groups.values()), keys.prefixes[0][1], key_lines, count,
                            tombstones)

    def _tables(self, groups: list[_Group], key_schema: dict[str, Any], key_lines: list[bytes],
                count: int, tombstones: int) -> Decoded:
        key_specs = _specs(key_schema)
        if not key_specs or _SEQ in {s.name for s in key_specs}:
            raise Fallback("key is not a JSON object of columns")
        # Keys are compared by their columns: a key with more fields, or fewer, falls back.
        key_read = _read(key_lines, pa.schema([(s.name, _json_type(s)) for s in key_specs]),
                         extra_fields="error")
        if any(column.null_count for column in key_read.columns):
            raise Fallback("a key without one of its columns")
        groups = [g for g in groups if g.seqs]  # a schema text seen only in tombstones
        images: list[tuple[_Group, pa.Table, pa.Array]] = []
        shapes: dict[Shape, None] = {}
        key_names = tuple(s.name for s in key_specs)
        for group in groups:
            table, group_ops = self._images(group, key_names, shapes)
            images.append((group, table, group_ops))
        # Every change has one sequence number, 0 .. n-1 in record order, and is in one group.
        order = pc.sort_indices(pa.array([s for g in groups for s in g.seqs], pa.int64()))
        ops = pa.concat_arrays([g_ops for _, _, g_ops in images]).take(order)
        seqs = pa.array(range(len(key_lines)), pa.int64())
        # The last change per key: the highest sequence number in each group of equal keys.
        last = key_read.append_column(_SEQ, seqs).group_by(list(key_names), use_threads=False) \
            .aggregate([(_SEQ, "max")]).column(f"{_SEQ}_max").combine_chunks()
        is_delete = pc.equal(ops, "d")
        deleted = pc.and_(pc.is_in(seqs, last), is_delete)
        key_columns = [_convert(s, key_read.column(s.name)) for s in key_specs]
        tables = []
        for group, table, group_ops in images:
            keep = pc.and_(pc.is_in(pa.array(group.seqs, pa.int64()), last),
                           pc.not_equal(group_ops, "d"))
            tables.append(table.filter(keep))
        deletes_table = pa.Table.from_arrays([ops, *key_columns],
                                             names=[OP_COLUMN, *key_names]).filter(deleted)
        tables.append(deletes_table)
        deletes = deletes_table.num_rows
        return Decoded([t for t in tables if t.num_rows], list(shapes), count, tombstones,
                       len(last) - deletes, deletes)

    def _images(self, group: _Group, key_names: tuple[str, ...],
                shapes: dict[Shape, None]) -> tuple[pa.Table, pa.Array]:
        """The group's images (`before` of deletes, `after` of the rest) with their ops."""
        specs = {name: _specs(field_schema(group.schema, name)) for name in ("before", "after")}
        read = _read(group.lines, pa.schema([
            ("op", pa.string()), ("before", _struct(specs["before"])),
            ("after", _struct(specs["after"]))]))
        ops = read.column("op").combine_chunks()
        if ops.null_count or not pc.all(pc.is_in(ops, pa.array(sorted(OPS)))).as_py():
            raise Fallback("not an applicable change envelope")
        is_delete = pc.equal(ops, "d")
        before, after = (read.column(n).combine_chunks() for n in ("before", "after"))
        if pc.any(pc.and_(pc.invert(is_delete), after.is_null())).as_py():
            raise Fallback("a change without an 'after' object")
        for name, image, rows in (("before", before, is_delete),
                                  ("after", after, pc.invert(is_delete))):
            if pc.any(pc.and_(rows, image.is_valid())).as_py():
                if not set(key_names) <= {s.name for s in specs[name]}:
                    raise Fallback("a key column the image does not have")
                shapes[Shape(self.topic, specs[name], key_names)] = None
        # flatten(), unlike field(), makes a field null where its whole image is null.
        if specs["before"] == specs["after"]:
            columns = [_convert(s, pc.if_else(is_delete, b, a)) for s, b, a in
                       zip(specs["after"], before.flatten(), after.flatten(), strict=True)]
        elif pc.any(pc.and_(is_delete, before.is_valid())).as_py():
            raise Fallback("before and after images of different columns")
        else:
            columns = [_convert(s, a) for s, a in zip(specs["after"], after.flatten(), strict=True)]
        names = [OP_COLUMN, *(s.name for s in specs["after"])]
        return pa.Table.from_arrays([ops, *columns], names=names), ops
