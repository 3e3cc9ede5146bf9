"""A truncate record (op=t) empties the table at its place in the stream, exactly once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from connector.schema import Column, TableSchema
from spark_consumer.iceberg.offsets import (
    OFFSETS_PROPERTY,
    decode_offsets,
    iceberg_table,
    table_offsets,
)
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.spark.events import Changes
from tests.spark.helpers import apply_once, table_rows, topic_ends
from tests.spark.test_keyless import BAG, multiset, table_multiset

pytestmark = pytest.mark.spark

ITEMS = TableSchema("shop", "items", (Column("id", "int", nullable=False),
                                      Column("v", "varchar", length=20)), ("id",))


def _snapshots(spark: SparkSession, table: str) -> list[dict[str, Any]]:
    rows = spark.sql(f"SELECT snapshot_id, operation, summary FROM {table}.snapshots "
                     "ORDER BY committed_at").collect()
    return [r.asDict() for r in rows]


def _rollback(spark: SparkSession, table: str, snapshot_id: int) -> None:
    """The table as a run that stopped right after that snapshot's commit left it."""
    iceberg_table(spark, table).manageSnapshots().rollbackTo(snapshot_id).commit()


def test_truncate_empties_the_table_where_it_is_once_and_reruns_give_the_same_table(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    changes = Changes(ITEMS, unique_name)
    topic, table = changes.topic, f"gtidmark.{unique_name}.items"
    create_topic(broker.bootstrap, topic, 1)
    produce(broker.bootstrap, topic, [changes.upsert("c", {"id": 1, "v": "a"}),
                                      changes.upsert("c", {"id": 2, "v": "b"})])
    apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)
    assert [r["id"] for r in table_rows(spark, table)] == [1, 2]
    before_batch = _snapshots(spark, table)[-1]["snapshot_id"]
    produce(broker.bootstrap, topic, [  # one batch: offsets 2..7
        changes.upsert("u", {"id": 1, "v": "a2"}), changes.upsert("c", {"id": 3, "v": "c"}),
        changes.truncate(),  # offset 4
        changes.upsert("c", {"id": 4, "v": "d"}), changes.upsert("u", {"id": 4, "v": "d2"}),
        changes.upsert("c", {"id": 5, "v": "e"})])
    job = apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)
    expected = [{"id": 4, "v": "d2"}, {"id": 5, "v": "e"}]
    assert job.batches == 1 and job.dead_letters == 0
    assert table_rows(spark, table) == expected
    ends = topic_ends(broker.bootstrap, topic, 1)
    assert table_offsets(spark, table) == {topic: ends}
    # The emptying commit carries offsets just past the truncate, and nothing else
    emptied = _snapshots(spark, table)[-2]
    assert decode_offsets(emptied["summary"][OFFSETS_PROPERTY]) == {topic: {0: 5}}

    # A run that stopped after the emptying commit, or before it: the rerun gives the same
    for snapshot in (emptied["snapshot_id"], before_batch):
        _rollback(spark, table, snapshot)
        apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)
        assert table_rows(spark, table) == expected
        assert table_offsets(spark, table) == {topic: ends}


def test_truncate_in_the_first_batch_and_on_a_table_without_key(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """A table created by the batch (its first record a truncate, which has no key) holds
    only the rows after the last one; a keyless one too (its whole-row steps before the
    truncate are void)."""
    items, bag = Changes(ITEMS, unique_name), Changes(BAG, unique_name)
    for changes in (items, bag):
        create_topic(broker.bootstrap, changes.topic, 1)
    produce(broker.bootstrap, items.topic, [  # a keyed table, its first record null-keyed
        items.truncate(), items.upsert("c", {"id": 1, "v": "a"}), items.truncate(),
        items.upsert("c", {"id": 2, "v": "b"})])
    one, two = {"a": 1, "b": "p", "x": None}, {"a": 2, "b": None, "x": 0.5}
    produce(broker.bootstrap, bag.topic, [bag.upsert("c", one), bag.upsert("c", one)])
    apply_once(spark, broker.bootstrap, [items.topic, bag.topic], unique_name, tmp_path)
    assert table_rows(spark, f"gtidmark.{unique_name}.items") == [{"id": 2, "v": "b"}]
    produce(broker.bootstrap, bag.topic, [bag.upsert("c", one), bag.truncate(),
                                          bag.upsert("c", two), bag.upsert("c", one)])
    # merged on its key (taken for keyless, an update without a before image is bad)
    produce(broker.bootstrap, items.topic, [items.upsert("u", {"id": 2, "v": "b2"})])
    job = apply_once(spark, broker.bootstrap, [items.topic, bag.topic], unique_name, tmp_path)
    assert job.dead_letters == 0
    assert table_rows(spark, f"gtidmark.{unique_name}.items") == [{"id": 2, "v": "b2"}]
    assert table_multiset(spark, f"gtidmark.{unique_name}.bag") == multiset([two, one])
