"""Pure logic of the job (no Spark, no broker): decoding, per-key reduction, planning, arguments."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_consumer.dbztypes import (
    DATE_DAYS,
    TS_MICROS,
    TS_MILLIS,
    convert_value,
    decode_decimal,
    encode_decimal,
    spec_from_connect_field,
)
from spark_consumer.decode import BadRecord, Change, Decoder
from spark_consumer.job import main
from spark_consumer.planner import OffsetRange, plan_ranges
from spark_consumer.reader import RangeStats, reduce_range
from tests.spark import events as ev


@given(st.integers(-(10**30), 10**30), st.integers(0, 12))
def test_connect_decimal_round_trips(unscaled: int, scale: int) -> None:
    value = Decimal(unscaled).scaleb(-scale)
    assert decode_decimal(encode_decimal(value, scale), scale) == value


def test_debezium_logical_types_become_spark_types() -> None:
    decimal = spec_from_connect_field(ev.fld("a", "bytes", "org.apache.kafka.connect.data.Decimal",
                                             params={"scale": "3",
                                                     "connect.decimal.precision": "12"}))
    assert decimal.spark_type == "decimal(12,3)"
    assert decimal.convert(encode_decimal(Decimal("-12.345"), 3)) == Decimal("-12.345")
    zoned = spec_from_connect_field(ev.fld("z", "string", "io.debezium.time.ZonedTimestamp"))
    assert (zoned.spark_type, zoned.convert("2024-03-01T10:00:00+02:00")) == (
        "timestamp", dt.datetime(2024, 3, 1, 8, tzinfo=dt.UTC))
    assert spec_from_connect_field(ev.fld("t", "int64", "io.debezium.time.MicroTime")).spark_type \
        == "bigint"
    assert spec_from_connect_field(ev.fld("b", "bytes", "io.debezium.data.Bits")).convert("AQI=") \
        == b"\x01\x02"
    assert spec_from_connect_field(ev.fld("e", "string", "io.debezium.data.Enum")).spark_type \
        == "string"
    assert convert_value(19000, "date", DATE_DAYS) == dt.date(2022, 1, 8)
    assert convert_value(1_000, "timestamp", TS_MILLIS) == convert_value(
        1_000_000, "timestamp", TS_MICROS) == dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.UTC)


OPS = st.sampled_from(["c", "u", "d", "r", "tombstone", "bad"])


@given(st.lists(st.tuples(st.integers(0, 5), OPS), max_size=40))
def test_reduction_keeps_the_last_change_per_key(records: list[tuple[int, str]]) -> None:
    raw = []
    expected: dict[int, tuple[str, int]] = {}
    for offset, (id_, op) in enumerate(records):
        k = json.dumps({"id": id_}).encode()
        if op == "tombstone":
            raw.append(("t", 0, offset, k, None))
            continue
        if op == "bad":
            raw.append(("t", 0, offset, k, b"\xff not json"))
            continue
        after = None if op == "d" else {"id": id_, "n": offset}
        raw.append(("t", 0, offset, k, ev.value(op, {"id": id_}, after, None)))
        expected[id_] = (op, offset)
    out = list(reduce_range(raw, Decoder(), OffsetRange("t", 0, 0, len(raw))))
    changes = {c.row["id"]: (c.op, c.offset) for c in out if isinstance(c, Change)}
    assert changes == expected
    stats = [s for s in out if isinstance(s, RangeStats)]
    assert [(s.records, s.tombstones, s.bad) for s in stats] == [(
        len(raw), sum(op == "tombstone" for _, op in records),
        sum(op == "bad" for _, op in records))]
    assert sum(isinstance(b, BadRecord) for b in out) == stats[0].bad


def test_schemaless_values_take_the_types_of_the_existing_table() -> None:
    known = {"t": {"at": spec_from_connect_field(ev.fld("at", "int64",
                                                        "io.debezium.time.MicroTimestamp"))}}
    change = Decoder(known).decode("t", 0, 0, b'{"id": 1}', ev.value(
        "c", None, {"id": 1, "at": 1_500_000}, None))
    assert isinstance(change, Change)
    assert change.row == {"id": 1, "at": dt.datetime(1970, 1, 1, 0, 0, 1, 500000, tzinfo=dt.UTC)}


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
