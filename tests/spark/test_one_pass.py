"""A batch that fits its table is read by the MERGE itself; one that does not commits nothing
in that pass and lands whole by the read-first path (real broker, real Spark)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

import spark_consumer.job as job_module
from connector.schema import Column, TableSchema
from spark_consumer.offsets import table_offsets
from spark_consumer.reader import RangeStats
from spark_consumer.source import side_meta, side_results
from tests.kafka_tools import create_topic, produce
from tests.services import Broker
from tests.spark.events import Changes
from tests.spark.helpers import apply_once, table_rows, topic_ends

pytestmark = pytest.mark.spark

ITEMS = TableSchema("shop", "items", (Column("id", "int", nullable=False),
                                      Column("v", "varchar", length=20)), ("id",))
WIDER = TableSchema("shop", "items", (*ITEMS.columns, Column("w", "int")), ("id",))


def snapshots(spark: SparkSession, table: str) -> int:
    return int(spark.sql(f"SELECT count(*) FROM {table}.snapshots").collect()[0][0])


def first_batch(spark: SparkSession, broker: Broker, changes: Changes, namespace: str,
                tmp_path: Path) -> job_module.Job:
    create_topic(broker.bootstrap, changes.topic, 2)
    produce(broker.bootstrap, changes.topic,
            [changes.upsert("c", {"id": i, "v": f"a{i}"}) for i in range(20)])
    return apply_once(spark, broker.bootstrap, [changes.topic], namespace, tmp_path)


def test_a_batch_that_fits_the_table_never_takes_the_read_first_path(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    changes = Changes(ITEMS, unique_name)
    job = first_batch(spark, broker, changes, unique_name, tmp_path)
    produce(broker.bootstrap, changes.topic,
            [changes.upsert("u", {"id": i, "v": f"b{i}"}) for i in range(10, 30)]
            + changes.delete({"id": 0, "v": "a0"}))

    def refused(*args: Any) -> Any:
        raise AssertionError("the read-first path was taken")

    monkeypatch.setattr(job_module, "read_source", refused)
    ranges, ends = job.plan(None)
    result = job.run_batch(ranges, ends)

    table = f"gtidmark.{unique_name}.items"
    assert (result.records, result.tombstones, result.bad) == (22, 1, 0)
    assert result.keys == {table: 21}
    assert table_rows(spark, table) == ([{"id": i, "v": f"a{i}"} for i in range(1, 10)]
                                        + [{"id": i, "v": f"b{i}"} for i in range(10, 30)])
    assert table_offsets(spark, table) == {changes.topic: topic_ends(broker.bootstrap,
                                                                     changes.topic, 2)}


def test_a_new_column_and_a_bad_record_abort_the_one_pass_merge_and_the_batch_lands_whole(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    changes, wider = Changes(ITEMS, unique_name), Changes(WIDER, unique_name)
    job = first_batch(spark, broker, changes, unique_name, tmp_path)
    table = f"gtidmark.{unique_name}.items"
    before = snapshots(spark, table)
    key, value = changes.upsert("u", {"id": 5, "v": "bad"})
    assert value is not None
    produce(broker.bootstrap, changes.topic,
            [changes.upsert("u", {"id": i, "v": f"b{i}"}) for i in range(10)]
            + [wider.upsert("c", {"id": 40, "v": "new", "w": 7}),
               (key, value.replace(b'"op":"u"', b'"op":"x"'))])

    with caplog.at_level("INFO", logger="spark_consumer"):
        ranges, ends = job.plan(None)
        result = job.run_batch(ranges, ends)

    assert sum("reading it first" in r.getMessage() for r in caplog.records) == 1
    assert snapshots(spark, table) == before + 1  # the failed pass committed nothing
    assert (result.records, result.bad) == (12, 1)
    dead = [json.loads(x) for x in (tmp_path / "dead-letter.jsonl").read_text().splitlines()]
    assert [d["reason"].split(":")[0] for d in dead] == ["unknown op 'x'"]
    assert table_rows(spark, table) == (
        [{"id": i, "v": f"b{i}", "w": None} for i in range(10)]
        + [{"id": i, "v": f"a{i}", "w": None} for i in range(10, 20)]
        + [{"id": 40, "v": "new", "w": 7}])
    assert table_offsets(spark, table) == {changes.topic: topic_ends(broker.bootstrap,
                                                                     changes.topic, 2)}


def test_side_results_count_each_range_once_and_an_unread_range_is_an_error(
        spark: SparkSession) -> None:
    side = side_results(spark)
    stats = [RangeStats("t", p, 10, 0, 0, 10, 0) for p in range(2)]
    side.value = [(1, [stats[1]]), (0, [stats[0]]), (1, [stats[1]])]  # range 1 ran twice
    assert side_meta(side, 2) == stats
    with pytest.raises(RuntimeError, match="1 of 3 ranges were not read"):
        side_meta(side, 3)
