"""Pure logic of the job (no Spark, no broker): decoding, per-key reduction, planning, arguments."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.schema import Column, TableSchema
from spark_consumer.decoding.dbztypes import (
    DATE_DAYS,
    TS_MICROS,
    TS_MILLIS,
    convert_value,
    decimal_hints,
    spec_from_connect_field,
)
from spark_consumer.decoding.decode import BadRecord, Change, Decoder
from spark_consumer.job.main import main
from spark_consumer.reading.planner import OffsetRange, plan_ranges
from spark_consumer.reading.reader import RangeStats, reduce_range
from tests.spark.events import Changes

COUNTERS = TableSchema("app", "t", (Column("id", "int", nullable=False), Column("n", "int")),
                       ("id",))


def test_debezium_logical_types_become_spark_types() -> None:
    decimal = spec_from_connect_field({"field": "a", "type": "bytes", "optional": True,
                                       "name": "org.apache.kafka.connect.data.Decimal",
                                       "parameters": {"scale": "3",
                                                      "connect.decimal.precision": "12"}})
    assert (decimal.spark_type, decimal.scale) == ("decimal(12,3)", 3)
    wide = spec_from_connect_field({"field": "w", "type": "bytes", "optional": True,
                                    "name": "org.apache.kafka.connect.data.Decimal",
                                    "parameters": {"scale": "30",
                                                   "connect.decimal.precision": "65"}})
    assert (wide.spark_type, wide.scale) == ("string", 30)
    micro_time = spec_from_connect_field({"field": "t", "type": "int64",
                                          "name": "io.debezium.time.MicroTime"})
    assert micro_time.spark_type == "bigint"
    assert convert_value(19000, "date", DATE_DAYS) == dt.date(2022, 1, 8)
    assert convert_value(1_000, "timestamp", TS_MILLIS) == convert_value(
        1_000_000, "timestamp", TS_MICROS) == dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.UTC)


OPS = st.sampled_from(["c", "u", "d", "r", "tombstone", "bad"])


@given(st.lists(st.tuples(st.integers(0, 5), OPS), max_size=40))
def test_reduction_keeps_the_last_change_per_key(records: list[tuple[int, str]]) -> None:
    encode = Changes(COUNTERS, "x", schemas=False)
    raw = []
    expected: dict[int, tuple[str, int]] = {}
    for offset, (id_, op) in enumerate(records):
        row = {"id": id_, "n": offset}
        if op == "tombstone":
            key, value = encode.delete(row)[1]
        elif op == "bad":
            key, value = encode.encoder.key(row), b"\xff not json"
        else:
            key, value = encode.delete(row)[0] if op == "d" else encode.upsert(op, row)
            expected[id_] = (op, offset)
        raw.append(("t", 0, offset, key, value))
    out = list(reduce_range(raw, Decoder(), OffsetRange("t", 0, 0, len(raw))))
    changes = {c.row["id"]: (c.op, c.offset) for c in out if isinstance(c, Change)}
    assert changes == expected
    stats = [s for s in out if isinstance(s, RangeStats)]
    assert [(s.records, s.tombstones, s.bad) for s in stats] == [(
        len(raw), sum(op == "tombstone" for _, op in records),
        sum(op == "bad" for _, op in records))]
    assert sum(isinstance(b, BadRecord) for b in out) == stats[0].bad


SCHEMALESS = TableSchema("app", "t", (Column("id", "int", nullable=False),
                                      Column("at", "datetime", scale=6),
                                      Column("price", "decimal", precision=8, scale=2)), ("id",))
SOURCE_ROW = {"id": 1, "at": dt.datetime(1970, 1, 1, 0, 0, 1, 500000), "price": Decimal("-0.01")}
DECODED_ROW = {"id": 1, "at": dt.datetime(1970, 1, 1, 0, 0, 1, 500000, tzinfo=dt.UTC),
               "price": Decimal("-0.01")}


def test_schemaless_values_take_the_types_of_the_existing_table() -> None:
    typed = Decoder()
    assert isinstance(typed.decode("x.app.t", 0, 0, *Changes(SCHEMALESS, "x").upsert(
        "c", SOURCE_ROW)), Change)
    (shape,) = typed.shapes.values()  # the table the typed events created
    known = {"x.app.t": {c.name: c for c in shape.columns}}
    change = Decoder(known).decode("x.app.t", 0, 0, *Changes(SCHEMALESS, "x", schemas=False)
                                   .upsert("c", SOURCE_ROW))
    assert isinstance(change, Change)
    assert change.row == DECODED_ROW


def test_schemaless_precise_decimal_needs_a_hint_and_is_exact_with_one() -> None:
    item = Changes(SCHEMALESS, "x", schemas=False).upsert("c", SOURCE_ROW)
    guessed = Decoder().decode("x.app.t", 0, 0, *item)
    assert isinstance(guessed, Change) and guessed.row["price"] == "/w=="  # base64 text
    known = {"x.app.t": decimal_hints("x.app.t", {"app.t.price": (8, 2), "app.u.price": (9, 1)})}
    assert list(known["x.app.t"]) == ["price"]
    hinted = Decoder(known).decode("x.app.t", 0, 0, *item)
    assert isinstance(hinted, Change) and hinted.row["price"] == Decimal("-0.01")


TPS = st.dictionaries(st.tuples(st.sampled_from("ab"), st.integers(0, 3)),
                      st.tuples(st.integers(0, 1000), st.integers(0, 1000)), max_size=8)


@given(TPS, st.one_of(st.none(), st.integers(0, 3000)))
def test_plans_stay_within_partitions_and_cap(spans: dict[tuple[str, int], tuple[int, int]],
                                              cap: int | None) -> None:
    starts = {tp: s for tp, (s, _) in spans.items()}
    ends = {tp: e for tp, (_, e) in spans.items()}
    ranges = plan_ranges(starts, ends, cap)
    assert sorted((r.topic, r.partition) for r in ranges) == sorted(ends)
    lag = sum(max(0, e - starts[tp]) for tp, e in ends.items())
    total = sum(r.size for r in ranges)
    for r in ranges:
        assert r.start == starts[(r.topic, r.partition)]
        assert r.start <= r.end <= max(r.start, ends[(r.topic, r.partition)])
    assert total == (lag if cap is None else min(cap, lag))


@pytest.mark.parametrize("argv, named", [
    ([], "--bootstrap-servers"),
    (["--bootstrap-servers", "x"], "--topics"),
    (["--topics", "a", "--topic-pattern", "b", "--bootstrap-servers", "x"], "--topic-pattern"),
    (["--topic-pattern", "(", "--bootstrap-servers", "x"], "--topic-pattern"),
    (["--topics", "a", "--bootstrap-servers", "x", "--max-offsets-per-batch", "-1"],
     "--max-offsets-per-batch"),
    (["--topics", "a", "--bootstrap-servers", "x", "--spark-conf", "novalue"], "--spark-conf"),
])
def test_bad_arguments_exit_2_with_one_line(argv: list[str], named: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err
