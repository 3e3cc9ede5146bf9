"""A source primary key change applied by the job: the table merges on the old key up to the
change and on the new one after it, and ends equal to the source.

The records are the connector's own encoding of the table before and after
`ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (a, b)`. (`gtidmark run` itself keeps the
old key after such an ALTER: its table-map schema cache ignores the primary key.)
"""

from __future__ import annotations

import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from pyspark.sql import SparkSession

from connector.schema import Column, TableSchema
from spark_consumer.decoding.columnar import RawRecord
from spark_consumer.reading.keys import KeyChange, KeyWatch, cut_at
from spark_consumer.reading.planner import OffsetRange
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic
from tests.spark.events import Changes
from tests.spark.helpers import apply_once

pytestmark = pytest.mark.spark

COLUMNS = (Column("a", "int", nullable=False), Column("b", "int", nullable=False),
           Column("v", "varchar", length=40, charset="utf8mb4"))
AGE = 3600.0
LINE = re.compile(r"batch (\d+) table \S+: (\d+) records, .* lag (\d+) records / ([\d.]+) s, .*")


def test_primary_key_change_merges_on_the_new_key_after_it(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    old = Changes(TableSchema("app", "t", COLUMNS, ("a",)), unique_name)
    new = Changes(TableSchema("app", "t", COLUMNS, ("a", "b")), unique_name)
    rows = {(a, a % 3): {"a": a, "b": a % 3, "v": f"v{a}"} for a in range(1, 21)}
    items = [old.upsert("c", r) for r in rows.values()]
    rows[(3, 0)]["v"] = "old-key update"
    items += [old.upsert("u", rows[(3, 0)]), *old.delete(rows.pop((4, 1)))]
    old_key = len(items)
    # ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (a, b): rows sharing `a` now differ.
    for row in ({"a": 1, "b": 7, "v": "same a, other b"}, {"a": 2, "b": 8, "v": "x"}):
        rows[(row["a"], row["b"])] = row
        items.append(new.upsert("c", row))
    rows[(1, 1)]["v"] = "new-key update"
    items += [new.upsert("u", rows[(1, 1)]), *new.delete(rows.pop((2, 2)))]
    moved = {**rows.pop((5, 2)), "b": 9}  # a key update: delete + create
    rows[(5, 9)] = moved
    items += [*new.delete({"a": 5, "b": 2, "v": "v5"}), new.upsert("c", moved)]
    items += new.delete(rows.pop((6, 0)))
    create_topic(broker.bootstrap, old.topic, 2)  # a row's old and new keys may part ways
    started = time.time()
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for n, (key, value) in enumerate(items):  # the old key's records are an hour old
        producer.produce(old.topic, key=key, value=value,
                         timestamp=int((started - (AGE if n < old_key else 0)) * 1000))
    assert producer.flush(30) == 0

    with caplog.at_level(logging.INFO, logger="spark_consumer"):
        job = apply_once(spark, broker.bootstrap, [old.topic], unique_name, tmp_path)
    assert job.dead_letters == 0
    # Batch 1 applies up to the change: its lag is the records after it, in records and age.
    lines = [m.groups() for m in (LINE.fullmatch(r.getMessage()) for r in caplog.records) if m]
    assert [n for n, *_ in lines] == ["1", "2"]
    (_, read, lag, seconds), (_, _, lag_after, seconds_after) = lines
    assert int(lag) == len(items) - int(read) > 0 and int(lag_after) == 0
    assert float(seconds) >= AGE > float(seconds_after)
    table = f"gtidmark.{unique_name}.t"
    got: dict[tuple[int, int], dict[str, Any]] = {
        (r["a"], r["b"]): r.asDict() for r in spark.table(table).collect()}
    assert got == rows
    props = {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {table}").collect()}
    assert json.loads(props["gtidmark.key"]) == ["a", "b"]


def _record(offset: int, key: dict[str, int] | None, schema: bool = False) -> RawRecord:
    if key is None:
        return ("p.db.t", 0, offset, None, b"{}")
    raw = {"schema": {"type": "struct"}, "payload": key} if schema else key
    return ("p.db.t", 0, offset, json.dumps(raw).encode(), b"{}")


def test_key_watch_stops_a_range_at_its_first_record_of_other_key_columns() -> None:
    records = [_record(0, {"a": 1}, schema=True), _record(1, None), _record(2, {"a": 2}),
               _record(3, {"b": 1, "a": 1}, schema=True), _record(4, {"a": 3})]
    watch = KeyWatch(["a"])
    assert [r[2] for r in watch.records(records)] == [0, 1, 2]
    assert watch.change == KeyChange("p.db.t", 0, 3, ("b", "a"))
    learning = KeyWatch(None)  # no table yet: the range's first key is the one
    assert [r[2] for r in learning.records(records[3:])] == [3]
    assert learning.change == KeyChange("p.db.t", 0, 4, ("a",))
    reordered = KeyWatch(["a", "b"])  # the same columns in another order: the same key
    assert len(list(reordered.records(records[3:4]))) == 1 and reordered.change is None
    ranges = [OffsetRange("p.db.t", 0, 0, 5), OffsetRange("p.db.t", 1, 2, 9)]
    assert cut_at(ranges, [watch.change]) == [OffsetRange("p.db.t", 0, 0, 3), ranges[1]]
