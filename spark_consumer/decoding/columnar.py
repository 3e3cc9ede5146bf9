"""Decode a whole offset range at once: orjson per record, then every column to Arrow in one go.

Only JSON-with-schemas records take this path. Anything else in a range (schemaless JSON, a
bad record, a value the columnar conversion does not take) raises `Fallback`: the range is
then decoded row by row by `decode.Decoder`, which is the reference for both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
import pyarrow as pa

from spark_consumer.decoding.arrowtypes import Unsupported, column
from spark_consumer.decoding.dbztypes import ColumnSpec, SchemaError, specs_from_struct_schema
from spark_consumer.decoding.decode import OPS, Shape, field_schema
from spark_consumer.decoding.envelope import Envelopes, NotEnvelope

OP_COLUMN = "__gtidmark_op"
RawRecord = tuple[str, int, int, bytes | None, bytes | None]


class Fallback(Exception):
    """The range needs the row decoder (the message says why, for the debug log)."""


@dataclass
class _Group:
    """Records sharing one struct schema: their sequence numbers and JSON objects."""

    specs: tuple[ColumnSpec, ...]
    seqs: list[int] = field(default_factory=list)
    values: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Decoded:
    """A range decoded: Arrow tables of the last change per key, shapes and counts."""

    tables: list[pa.Table]
    shapes: list[Shape]
    records: int
    tombstones: int
    upserts: int
    deletes: int


class ColumnarDecoder:
    """A decoder of whole ranges: a record that is no change envelope, or anything else it
    did not foresee, makes it fall back, and the row decoder (the reference) decides."""

    def decode(self, records: Iterable[RawRecord]) -> Decoded:
        """Every record converted (so any bad one falls back), the last one per key kept."""
        try:
            return self._decode(records)
        except (NotEnvelope, pa.ArrowException, LookupError, ValueError, TypeError) as exc:
            raise Fallback(f"{type(exc).__name__}: {str(exc)[:200]}") from None

    def _decode(self, records: Iterable[RawRecord]) -> Decoded:
        raise NotImplementedError


class RangeDecoder(ColumnarDecoder):
    """Decodes the records of one topic partition range (one Spark task) with orjson."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self._groups: dict[bytes, _Group] = {}
        self._keys: dict[bytes, _Group] = {}
        self._shapes: dict[tuple[bytes, tuple[str, ...]], Shape] = {}
        self._values, self._key_envelopes = Envelopes(), Envelopes()
        # (learnt schema text, image name) -> the image's schema serialised and its group
        self._images: dict[tuple[int, str], tuple[bytes, _Group]] = {}
        self._key_groups: dict[int, _Group] = {}

    def _image(self, schema: dict[str, Any], learnt: int, name: str) -> tuple[bytes, _Group]:
        """The group of the records whose `name` image has the schema in `schema`."""
        found = self._images.get((learnt, name)) if learnt >= 0 else None
        if found is None:
            image_schema = field_schema(schema, name)
            if image_schema is None:
                raise Fallback("an image without a schema")
            ident = orjson.dumps(image_schema)
            found = ident, self._group(self._groups, ident, image_schema)
            if learnt >= 0:
                self._images[(learnt, name)] = found
        return found

    def _key_group(self, schema: dict[str, Any], learnt: int) -> _Group:
        group = self._key_groups.get(learnt) if learnt >= 0 else None
        if group is None:
            group = self._group(self._keys, orjson.dumps(schema), schema)
            if learnt >= 0:
                self._key_groups[learnt] = group
        return group

    def _group(self, groups: dict[bytes, _Group], ident: bytes,
               schema: dict[str, Any]) -> _Group:
        group = groups.get(ident)
        if group is None:
            try:
                group = _Group(tuple(specs_from_struct_schema(schema)))
            except SchemaError as exc:
                raise Fallback(f"schema: {exc}") from None
            groups[ident] = group
        return group

    def _note_shape(self, schema_ident: bytes, group: _Group,
                    key_columns: tuple[str, ...]) -> None:
        ident = (schema_ident, key_columns)
        if ident not in self._shapes:
            names = {s.name for s in group.specs}
            if not set(key_columns) <= names:
                raise Fallback("a key column the image does not have")
            self._shapes[ident] = Shape(self.topic, group.specs, key_columns)

    def _route(self, schema: dict[str, Any], learnt: int, key_schema: dict[str, Any],
               key_learnt: int, image_name: str,
               key_columns: tuple[str, ...]) -> tuple[_Group, _Group]:
        """The groups of a record's image and key (its shape noted)."""
        ident, group = self._image(schema, learnt, image_name)
        self._note_shape(ident, group, key_columns)
        return group, self._key_group(key_schema, key_learnt)

    def _decode(self, records: Iterable[RawRecord]) -> Decoded:
        latest: dict[bytes, int] = {}
        ops: list[str] = []
        count = tombstones = 0
        split_value, split_key = self._values.split, self._key_envelopes.split
        # (schema texts learnt, image, key columns) -> groups; only for learnt schema texts
        routes: dict[tuple[int, int, str, tuple[str, ...]], tuple[_Group, _Group]] = {}
        for _, _, _, key, value in records:
            count += 1
            if value is None:
                tombstones += 1
                continue
            payload, schema, learnt = split_value(value)
            if payload is None:
                tombstones += 1
                continue
            if type(payload) is not dict or payload.get("op") not in OPS or key is None:
                raise Fallback("not an applicable change envelope")
            op = payload["op"]
            key_payload, key_schema, key_learnt = split_key(key)
            if type(key_payload) is not dict or not key_payload:
                raise Fallback("key is not a JSON object")
            image_name = "before" if op == "d" else "after"
            image = payload.get(image_name)
            seq = len(ops)
            if type(image) is dict:
                route = (learnt, key_learnt, image_name, tuple(key_payload))
                groups = routes.get(route) if learnt >= 0 and key_learnt >= 0 else None
                if groups is None:
                    groups = self._route(schema, learnt, key_schema, key_learnt, image_name,
                                         route[3])
                    if learnt >= 0 and key_learnt >= 0:
                        routes[route] = groups
                group, keys = groups
                group.seqs.append(seq)
                group.values.append(image)
            elif op != "d":
                raise Fallback(f"op {op!r} without an 'after' object")
            else:
                keys = self._key_group(key_schema, key_learnt)
            keys.seqs.append(seq)
            keys.values.append(key_payload)
            ops.append(op)
            latest[orjson.dumps(key_payload, option=orjson.OPT_SORT_KEYS)] = seq
        last = set(latest.values())
        deletes = sum(1 for seq in last if ops[seq] == "d")
        tables = [t for g in self._groups.values() if (t := _table(g, ops, last, False))]
        tables += [t for g in self._keys.values() if (t := _table(g, ops, last, True))]
        return Decoded([t for t in tables if t.num_rows], list(self._shapes.values()), count,
                       tombstones, len(last) - deletes, deletes)


def _table(group: _Group, ops: list[str], last: set[int], deletes: bool) -> pa.Table:
    """The group's columns (all values converted), filtered to the surviving changes."""
    try:
        arrays = [column(spec, [v.get(spec.name) for v in group.values]) for spec in group.specs]
    except Unsupported as exc:
        raise Fallback(str(exc)) from None
    group_ops = [ops[seq] for seq in group.seqs]
    keep = [seq in last and (ops[seq] == "d") == deletes for seq in group.seqs]
    names = [OP_COLUMN, *(spec.name for spec in group.specs)]
    if len(set(names)) != len(names):
        raise Fallback("duplicate field names")
    table = pa.Table.from_arrays([pa.array(group_ops, pa.string()), *arrays], names=names)
    return table.filter(pa.array(keep, pa.bool_()))

