"""A batch that fits its table is read by the MERGE itself; one that does not commits nothing
in that pass and lands whole by the read-first path (real broker, real Spark), with either
reader of the one pass: Python (librdkafka) or Spark's Kafka source in the JVM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

import spark_consumer.job.batch as job_module
from connector.schema import Column, TableSchema
from spark_consumer.iceberg.offsets import OFFSETS_PROPERTY, table_offsets
from spark_consumer.reading.reader import RangeStats
from spark_consumer.reading.source import SourceRead, side_results
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.spark.events import Changes
from tests.spark.helpers import apply_once, table_rows, topic_ends

pytestmark = pytest.mark.spark
READERS = pytest.mark.parametrize("reader", ["python", "spark"])

ITEMS = TableSchema("shop", "items", (Column("id", "int", nullable=False),
                                      Column("v", "varchar", length=20)), ("id",))
WIDER = TableSchema("shop", "items", (*ITEMS.columns, Column("w", "int")), ("id",))


def snapshots(spark: SparkSession, table: str) -> list[tuple[str, dict[str, str]]]:
    """(operation, summary) of the table's snapshots, oldest first."""
    rows = spark.sql(f"SELECT operation, summary FROM {table}.snapshots "
                     "ORDER BY committed_at").collect()
    return [(r["operation"], dict(r["summary"])) for r in rows]


def first_batch(spark: SparkSession, broker: Broker, changes: Changes, namespace: str,
                tmp_path: Path, reader: str) -> job_module.Job:
    create_topic(broker.bootstrap, changes.topic, 2)
    produce(broker.bootstrap, changes.topic,
            [changes.upsert("c", {"id": i, "v": f"a{i}"}) for i in range(20)])
    return apply_once(spark, broker.bootstrap, [changes.topic], namespace, tmp_path,
                      kafka_reader=reader)


@READERS
def test_a_batch_that_fits_the_table_never_takes_the_read_first_path(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, reader: str) -> None:
    changes = Changes(ITEMS, unique_name)
    job = first_batch(spark, broker, changes, unique_name, tmp_path, reader)
    produce(broker.bootstrap, changes.topic,
            [changes.upsert("u", {"id": i, "v": f"b{i}"}) for i in range(10, 30)]
            + changes.delete({"id": 0, "v": "a0"}))

    def refused(*args: Any) -> Any:
        raise AssertionError("the read-first path was taken")

    table = f"gtidmark.{unique_name}.items"
    before = snapshots(spark, table)
    monkeypatch.setattr(job_module, "read_source", refused)
    if reader == "spark":  # nor the Python one-pass reader
        monkeypatch.setattr(job_module, "direct_source", refused)
    ranges, ends = job.plan(None)
    result = job.run_batch(ranges, ends)

    after = snapshots(spark, table)
    assert after[:-1] == before  # one commit: the MERGE, its offsets in it
    assert after[-1][0] == "overwrite" and OFFSETS_PROPERTY in after[-1][1]
    assert (result.records, result.tombstones, result.bad) == (22, 1, 0)
    assert result.keys == {table: 21}
    assert table_rows(spark, table) == ([{"id": i, "v": f"a{i}"} for i in range(1, 10)]
                                        + [{"id": i, "v": f"b{i}"} for i in range(10, 30)])
    assert table_offsets(spark, table) == {changes.topic: topic_ends(broker.bootstrap,
                                                                     changes.topic, 2)}


def bad_op(changes: Changes, id_: int) -> tuple[bytes | None, bytes]:
    """A change whose op is unknown: a bad record."""
    key, value = changes.upsert("u", {"id": id_, "v": "bad"})
    assert value is not None
    return key, value.replace(b'"op":"u"', b'"op":"x"')


def next_batch(job: job_module.Job, caplog: pytest.LogCaptureFixture) -> tuple[Any, int]:
    """The next batch's result, and how often it stopped a one-pass MERGE to read first."""
    with caplog.at_level("INFO", logger="spark_consumer"):
        ranges, ends = job.plan(None)
        result = job.run_batch(ranges, ends)
    return result, sum("reading it first" in r.getMessage() for r in caplog.records)


def dead_reasons(tmp_path: Path) -> list[str]:
    lines = (tmp_path / "dead-letter.jsonl").read_text().splitlines()
    return [json.loads(x)["reason"].split(":")[0] for x in lines]


@READERS
def test_a_new_column_stops_the_one_pass_merge_and_the_batch_lands_whole(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture, reader: str) -> None:
    changes, wider = Changes(ITEMS, unique_name), Changes(WIDER, unique_name)
    job = first_batch(spark, broker, changes, unique_name, tmp_path, reader)
    table = f"gtidmark.{unique_name}.items"
    before = snapshots(spark, table)
    produce(broker.bootstrap, changes.topic,
            [changes.upsert("u", {"id": i, "v": f"b{i}"}) for i in range(10)]
            + [wider.upsert("c", {"id": 40, "v": "new", "w": 7})])

    result, stopped = next_batch(job, caplog)

    assert stopped == 1
    assert len(snapshots(spark, table)) == len(before) + 1  # the stopped pass: no commit
    assert (result.records, result.bad) == (11, 0)
    assert table_rows(spark, table) == (
        [{"id": i, "v": f"b{i}", "w": None} for i in range(10)]
        + [{"id": i, "v": f"a{i}", "w": None} for i in range(10, 20)]
        + [{"id": 40, "v": "new", "w": 7}])
    assert table_offsets(spark, table) == {changes.topic: topic_ends(broker.bootstrap,
                                                                     changes.topic, 2)}


@READERS
def test_a_bad_record_alone_stops_the_one_pass_merge_and_is_dead_lettered_before_the_commit(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture, reader: str) -> None:
    changes = Changes(ITEMS, unique_name)
    job = first_batch(spark, broker, changes, unique_name, tmp_path, reader)
    table = f"gtidmark.{unique_name}.items"
    before = snapshots(spark, table)
    produce(broker.bootstrap, changes.topic,
            [changes.upsert("u", {"id": 1, "v": "b1"}), bad_op(changes, 5)])
    committed: list[int] = []
    dead_letter = job.dead_letter.write

    def noted(bad: list[Any]) -> None:
        committed.append(len(snapshots(spark, table)))  # commits before dead-lettering
        dead_letter(bad)

    job.dead_letter.write = noted  # type: ignore[method-assign]
    result, stopped = next_batch(job, caplog)

    assert stopped == 1
    assert committed == [len(before)]
    assert len(snapshots(spark, table)) == len(before) + 1
    assert (result.records, result.bad) == (2, 1)
    assert dead_reasons(tmp_path) == ["unknown op 'x'"]
    assert table_rows(spark, table)[1] == {"id": 1, "v": "b1"}
    assert table_offsets(spark, table) == {changes.topic: topic_ends(broker.bootstrap,
                                                                     changes.topic, 2)}


def test_side_results_count_each_range_once_and_only_those_of_their_own_read(
        spark: SparkSession) -> None:
    side = side_results(spark)
    stats = [RangeStats("t", p, 10, 0, 0, 10, 0) for p in range(2)]
    stale = RangeStats("t", 0, 99, 0, 0, 99, 0)
    read = SourceRead(spark.range(1), side, "this", 2)
    # range 1 ran twice; a task of an earlier read reported late
    side.value = [("earlier", 0, [stale]), ("this", 1, [stats[1]]), ("this", 0, [stats[0]]),
                  ("this", 1, [stats[1]])]
    assert read.meta() == stats
    with pytest.raises(RuntimeError, match="1 of 3 ranges were not read"):
        SourceRead(spark.range(1), side, "this", 3).meta()


def produce_in_transactions(bootstrap: str, topic: str,
                            batches: list[tuple[list[tuple[bytes | None, bytes]], bool]]) -> None:
    """Each batch in a transaction of its own, committed or (False) aborted."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": topic})
    producer.init_transactions(30)
    for items, commit in batches:
        producer.begin_transaction()
        for key, value in items:
            producer.produce(topic, key=key, value=value)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.flush(30)
            producer.abort_transaction(30)


def test_the_spark_reader_applies_committed_transactions_only(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """read_committed: an aborted transaction's records are skipped, the commit markers'
    offsets too, and the offsets committed are the topic's ends."""
    changes = Changes(ITEMS, unique_name)
    job = first_batch(spark, broker, changes, unique_name, tmp_path, "spark")
    produce_in_transactions(broker.bootstrap, changes.topic, [
        ([changes.upsert("u", {"id": i, "v": f"t{i}"}) for i in range(5)], True),
        ([changes.upsert("u", {"id": i, "v": "aborted"}) for i in range(20)], False),
        ([changes.upsert("c", {"id": 50, "v": "t50"})], True)])

    def refused(*args: Any) -> Any:
        raise AssertionError("the Python reader was taken")

    monkeypatch.setattr(job_module, "read_source", refused)
    monkeypatch.setattr(job_module, "direct_source", refused)
    ranges, ends = job.plan(None)
    result = job.run_batch(ranges, ends)

    table = f"gtidmark.{unique_name}.items"
    assert (result.records, result.bad, result.keys) == (6, 0, {table: 6})
    assert table_rows(spark, table) == ([{"id": i, "v": f"t{i}"} for i in range(5)]
                                        + [{"id": i, "v": f"a{i}"} for i in range(5, 20)]
                                        + [{"id": 50, "v": "t50"}])
    assert table_offsets(spark, table) == {changes.topic: topic_ends(broker.bootstrap,
                                                                     changes.topic, 2)}
