"""The columnar range decoders against the row decoder, on records of the connector's encoder.

Every path (Arrow's JSON reader, orjson columnar, row by row) ends in the MERGE source
(`source.source_batches`), so that is what is compared: the rows, shapes and counts a range
gives must not depend on the path that decoded it.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.schema import Column, TableSchema
from spark_consumer.decoding.arrowjson import ArrowRangeDecoder
from spark_consumer.decoding.columnar import Decoded, Fallback, RangeDecoder
from spark_consumer.decoding.dbztypes import ColumnSpec
from spark_consumer.decoding.decode import BadRecord, Shape
from spark_consumer.reading.planner import OffsetRange
from spark_consumer.reading.reader import Item, Part, RangeStats, decode_range, decode_rows
from spark_consumer.reading.source import source_batches
from tests.spark.events import Changes

V1 = TableSchema("app", "t", (Column("id", "int", nullable=False), Column("n", "int")), ("id",))
V2 = TableSchema("app", "t", (Column("id", "int", nullable=False), Column("n", "bigint"),
                              Column("s", "varchar", length=20)), ("id",))
TABLE = [ColumnSpec("id", "int"), ColumnSpec("n", "bigint"), ColumnSpec("s", "string")]
STEPS = st.lists(st.tuples(st.integers(0, 5), st.sampled_from(["c", "u", "d", "r", "tombstone"]),
                           st.booleans()), max_size=40)


def records(steps: list[tuple[int, str, bool]]) -> list[tuple[str, int, int, Any, Any]]:
    """Changes of keys 0-5 in two schema versions (a column added, one widened)."""
    out = []
    for offset, (id_, op, newer) in enumerate(steps):
        encode = Changes(V2 if newer else V1, "x")
        row: dict[str, Any] = {"id": id_, "n": offset * (1 << 33 if newer else 1)}
        if newer:
            row["s"] = f"v{offset}"
        if op == "tombstone":
            key, value = encode.delete(row)[1]
        else:
            key, value = encode.delete(row)[0] if op == "d" else encode.upsert(op, row)
        out.append((encode.topic, 0, offset, key, value))
    return out


def summary(items: list[Item]) -> tuple[list[dict[str, Any]], set[Shape], list[Any], list[Any]]:
    parts = [i for i in items if isinstance(i, Part)]
    rows = [r for b in source_batches(parts, TABLE) for r in b.to_pylist()]
    stats = [i for i in items if isinstance(i, RangeStats)]
    bad = [(b.offset, b.reason) for b in items if isinstance(b, BadRecord)]
    return (sorted(rows, key=lambda r: r["id"]), {i for i in items if isinstance(i, Shape)},
            stats, bad)


@settings(max_examples=150, deadline=None)
@given(STEPS)
def test_columnar_and_row_decoding_give_the_same_merge_source(
        steps: list[tuple[int, str, bool]]) -> None:
    raw = records(steps)
    rng = OffsetRange("x.app.t", 0, 0, len(raw))
    columnar = list(decode_range(raw, rng, {}))
    assert all(p.columnar for p in columnar if isinstance(p, Part))
    assert summary(columnar) == summary(list(decode_rows(raw, rng, {})))


@given(STEPS, st.sampled_from([b"\xff not json", b'{"op": "c"}', b'{"payload": {"op": "x"}}']),
       st.integers(0, 40))
def test_a_range_with_a_bad_record_is_decoded_row_by_row(steps: list[tuple[int, str, bool]],
                                                        bad: bytes, at: int) -> None:
    raw = records(steps)
    raw.insert(min(at, len(raw)), ("x.app.t", 0, 1000, b'{"id": 9}', bad))
    rng = OffsetRange("x.app.t", 0, 0, len(raw))
    items = list(decode_range(iter(raw), rng, {}))  # read as it arrives, like a consumer
    assert not any(p.columnar for p in items if isinstance(p, Part))
    assert [b.offset for b in items if isinstance(b, BadRecord)] == [1000]
    assert summary(items) == summary(list(decode_rows(raw, rng, {})))


def merge_source(decoded: Decoded) -> tuple[list[dict[str, Any]], set[Shape], tuple[int, ...]]:
    rows = [r for b in source_batches([Part("x.app.t", t) for t in decoded.tables], TABLE)
            for r in b.to_pylist()]
    return (sorted(rows, key=lambda r: r["id"]), set(decoded.shapes),
            (decoded.records, decoded.tombstones, decoded.upserts, decoded.deletes))


@settings(max_examples=150, deadline=None)
@given(STEPS)
def test_arrow_and_orjson_columnar_decoding_give_the_same_merge_source(
        steps: list[tuple[int, str, bool]]) -> None:
    raw = records(steps)
    arrow = ArrowRangeDecoder("x.app.t").decode(raw)
    assert merge_source(arrow) == merge_source(RangeDecoder("x.app.t").decode(raw))


# Records Arrow's JSON reader would read otherwise than orjson does, or not at all.
HOSTILE = {
    "NaN": lambda v: v.replace(b'"n":', b'"n":NaN,"m":', 1),
    "duplicate key": lambda v: v.replace(b'"op":', b'"op":"c","op":', 1),
    "line break": lambda v: v.replace(b',"op":', b',\n"op":', 1),
    "two objects": lambda v: v[:-1] + b'{"op":"c"}}',
    "invalid UTF-8": lambda v: v.replace(b'"s":"v', b'"s":"\xff', 1),
    "not an object": lambda v: v[:v.index(b'"payload":') + 10] + b"5}",
    "unknown op": lambda v: v.replace(b'"op":"', b'"op":"x', 1),
    "Inf in a field the table lacks": lambda v: v.replace(b'"n":', b'"m":Inf,"n":', 1),
    "NUL": lambda v: v.replace(b'"s":"v', b'"s":"\x00v', 1),
}


@pytest.mark.parametrize("damage", sorted(HOSTILE))
def test_a_record_arrow_would_read_otherwise_goes_to_the_paths_that_decide(damage: str) -> None:
    raw = records([(1, "c", True), (2, "u", True), (1, "u", True)])
    topic, partition, offset, key, value = raw[1]
    raw[1] = (topic, partition, offset, key, HOSTILE[damage](value))
    assert raw[1][4] != value
    with pytest.raises(Fallback):
        ArrowRangeDecoder(topic).decode(raw)
    rng = OffsetRange(topic, 0, 0, len(raw))
    assert summary(list(decode_range(iter(raw), rng, {}))) == \
        summary(list(decode_rows(raw, rng, {})))


def test_a_struct_column_is_decoded_columnar_by_orjson() -> None:
    schema = TableSchema("app", "t", (Column("id", "int", nullable=False),
                                      Column("g", "geometry")), ("id",))
    point = struct.pack("<I", 0) + b"\x01" + struct.pack("<Idd", 1, 1.5, -2.0)
    encode = Changes(schema, "x")
    raw = [(encode.topic, 0, 0, *encode.upsert("c", {"id": 1, "g": point}))]
    with pytest.raises(Fallback):
        ArrowRangeDecoder(encode.topic).decode(raw)
    (table,) = RangeDecoder(encode.topic).decode(raw).tables
    rng = OffsetRange(encode.topic, 0, 0, 1)
    (part,) = [p for p in decode_range(iter(raw), rng, {}) if isinstance(p, Part)]
    assert part.columnar and part.rows == table


def payload_replaced(raw: bytes, payload: bytes) -> bytes:
    return raw[:raw.index(b'"payload":') + 10] + payload + b"}"


def test_an_empty_payload_beside_two_objects_cannot_shift_rows_onto_other_records() -> None:
    raw = records([(1, "c", True), (2, "u", True), (3, "u", True), (4, "c", True)])
    second = b'{"before":null,"after":{"id":3,"n":5,"s":"shifted"},"op":"u"}}'
    for at, damage in ((1, lambda v: payload_replaced(v, b"")), (2, lambda v: v[:-1] + second)):
        topic, partition, offset, key, value = raw[at]
        raw[at] = (topic, partition, offset, key, damage(value))
    with pytest.raises(Fallback):
        ArrowRangeDecoder(raw[0][0]).decode(raw)
    rng = OffsetRange(raw[0][0], 0, 0, len(raw))
    assert summary(list(decode_range(iter(raw), rng, {}))) == \
        summary(list(decode_rows(raw, rng, {})))


KEY_DAMAGE = {
    "null": lambda k: payload_replaced(k, b"null"),
    "a field more": lambda k: k.replace(b'"payload":{', b'"payload":{"x":1,', 1),
    "a field less": lambda k: payload_replaced(k, b"{}"),
    "two objects": lambda k: k[:-1] + b'{"id":3}}',
}


@pytest.mark.parametrize("damage", sorted(KEY_DAMAGE))
def test_a_key_arrow_would_read_otherwise_goes_to_the_paths_that_decide(damage: str) -> None:
    raw = records([(1, "c", True), (2, "u", True), (1, "u", True)])
    topic, partition, offset, key, value = raw[1]
    raw[1] = (topic, partition, offset, KEY_DAMAGE[damage](key), value)
    with pytest.raises(Fallback):
        ArrowRangeDecoder(topic).decode(raw)
    rng = OffsetRange(topic, 0, 0, len(raw))
    assert summary(list(decode_range(iter(raw), rng, {}))) == \
        summary(list(decode_rows(raw, rng, {})))


def framed(raw: bytes | None) -> bytes | None:
    """A record as Confluent's Schema Registry converters frame it: magic 0, schema id."""
    return None if raw is None else b"\x00" + struct.pack(">I", 7) + raw


@pytest.mark.parametrize("which", ["values", "keys", "both", "the first value"])
def test_records_framed_for_a_schema_registry_go_to_the_paths_that_decide(which: str) -> None:
    raw = [(t, p, o, framed(k) if which in ("keys", "both") else k,
            framed(v) if which in ("values", "both") or (which == "the first value" and o == 0)
            else v)
           for t, p, o, k, v in records([(1, "c", True), (2, "u", True), (1, "u", True)])]
    with pytest.raises(Fallback):
        ArrowRangeDecoder(raw[0][0]).decode(raw)
    rng = OffsetRange(raw[0][0], 0, 0, len(raw))
    assert summary(list(decode_range(iter(raw), rng, {}))) == \
        summary(list(decode_rows(raw, rng, {})))


FLOATS = TableSchema("app", "t", (Column("id", "int", nullable=False), Column("f", "double")),
                     ("id",))


@pytest.mark.parametrize("token", [b"NaN", b"Inf", b"-Inf", b"Infinity", b"-Infinity"])
def test_a_bare_non_finite_number_goes_to_the_paths_that_decide(token: bytes) -> None:
    encode = Changes(FLOATS, "x")
    raw = [(encode.topic, 0, n, *encode.upsert("c", {"id": n, "f": 1.5})) for n in range(3)]
    topic, partition, offset, key, value = raw[1]
    raw[1] = (topic, partition, offset, key, value.replace(b'"f":1.5', b'"f":' + token))
    assert raw[1][4] != value
    with pytest.raises(Fallback):
        ArrowRangeDecoder(topic).decode(raw)
    rng = OffsetRange(topic, 0, 0, len(raw))
    table = [ColumnSpec("id", "int"), ColumnSpec("f", "double")]

    def shown(items: list[Item]) -> tuple[str, list[Any]]:
        parts = [i for i in items if isinstance(i, Part)]
        rows = [r for b in source_batches(parts, table) for r in b.to_pylist()]
        return (repr(sorted(rows, key=lambda r: r["id"])),
                [(b.offset, b.reason) for b in items if isinstance(b, BadRecord)])

    assert shown(list(decode_range(iter(raw), rng, {}))) == shown(list(decode_rows(raw, rng, {})))
