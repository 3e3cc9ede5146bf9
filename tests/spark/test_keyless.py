"""Tables without a primary key (null Kafka keys, full before images) and `--key`."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from connector.schema import Column, TableSchema
from spark_consumer.applying.keyless import merge_keyless
from spark_consumer.iceberg.offsets import table_offsets
from spark_consumer.iceberg.tables import TableState
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.spark.events import Changes, Item
from tests.spark.helpers import apply_once, topic_ends

pytestmark = pytest.mark.spark

BAG = TableSchema("app", "bag", (Column("a", "int"),
                                 Column("b", "varchar", length=5, charset="utf8mb4"),
                                 Column("x", "double")), ())
TAGGED = TableSchema("app", "tagged", (Column("code", "varchar", length=9, charset="utf8mb4"),
                                       Column("v", "int")), ())
PEOPLE = TableSchema("app", "people", (Column("id", "int", nullable=False),
                                       Column("email", "varchar", length=20, charset="utf8mb4"),
                                       Column("v", "int")), ("id",))
Row = dict[str, Any]


def bag_value(rng: random.Random) -> Row:
    """One of 8 values (NULLs included): rows repeat."""
    return {"a": rng.choice([None, 1]), "b": rng.choice([None, "p"]),
            "x": rng.choice([None, 0.5])}


def workload(changes: Changes, rows: list[Row], count: int, rng: random.Random) -> list[Item]:
    """Random inserts, updates and deletes of one row of equal values; `rows` is the source."""
    items: list[Item] = []
    for _ in range(count):
        pick = rng.random()
        if not rows or pick < 0.55:
            rows.append(bag_value(rng))
            items.append(changes.upsert("c", rows[-1]))
        elif pick < 0.8:
            before = rows.pop(rng.randrange(len(rows)))
            rows.append(bag_value(rng))
            items.append(changes.update(before, rows[-1]))
        else:
            items += changes.delete(rows.pop(rng.randrange(len(rows))))
    return items


def multiset(rows: list[Row]) -> list[tuple[Any, ...]]:
    return sorted(tuple((v is None, v) for v in r.values()) for r in rows)


def table_multiset(spark: SparkSession, name: str) -> list[tuple[Any, ...]]:
    return multiset([r.asDict() for r in spark.table(name).collect()])


def failing(real: Callable[..., None], modes: list[str]) -> Callable[..., None]:
    """The keyless MERGE, its first calls failing as `modes` says: "before" it runs, or
    "after" it committed; later calls pass."""

    def merge(spark: SparkSession, state: TableState, steps: DataFrame, view: str) -> None:
        mode = modes.pop(0) if modes else None
        if mode == "before":
            raise RuntimeError("injected: failed before the commit")
        real(spark, state, steps, view)
        if mode == "after":
            raise RuntimeError("injected: failed after the commit")

    return merge


def test_keyless_random_workload_with_duplicates_and_failed_batches_equals_the_source_rows(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    changes = Changes(BAG, unique_name)
    create_topic(broker.bootstrap, changes.topic, 1)
    table = f"gtidmark.{unique_name}.bag"
    rows: list[Row] = []
    produce(broker.bootstrap, changes.topic, workload(changes, rows, 90, random.Random(23)))
    assert len(set(multiset(rows))) < len(rows), "the workload leaves duplicate rows"
    modes = ["before", "after"]
    monkeypatch.setattr("spark_consumer.applying.merge.merge_keyless",
                        failing(merge_keyless, modes))
    for _ in range(2):  # the first batch fails before its commit, then right after it
        with pytest.raises(RuntimeError, match="injected"):
            apply_once(spark, broker.bootstrap, [changes.topic], unique_name, tmp_path,
                       max_offsets_per_batch=40)
    first = table_offsets(spark, table)[changes.topic][0]
    job = apply_once(spark, broker.bootstrap, [changes.topic], unique_name, tmp_path,
                     max_offsets_per_batch=40)
    assert job.dead_letters == 0 and first == 40 and job.batches >= 2
    assert table_multiset(spark, table) == multiset(rows)
    assert table_offsets(spark, table) == {
        changes.topic: topic_ends(broker.bootstrap, changes.topic, 1)}


def test_key_option_merges_on_the_named_columns_of_keyless_and_keyed_tables(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    tagged, people = Changes(TAGGED, unique_name), Changes(PEOPLE, unique_name)
    for changes in (tagged, people):
        create_topic(broker.bootstrap, changes.topic, 1)
    produce(broker.bootstrap, tagged.topic, [
        tagged.upsert("c", {"code": "a", "v": 1}), tagged.upsert("c", {"code": "b", "v": 2}),
        tagged.update({"code": "a", "v": 1}, {"code": "c", "v": 1}),  # the key changes
        tagged.update({"code": "b", "v": 2}, {"code": "b", "v": 5}),
        tagged.upsert("c", {"code": "d", "v": 4}), *tagged.delete({"code": "d", "v": 9})])
    produce(broker.bootstrap, people.topic, [
        people.upsert("c", {"id": 1, "email": "x@a", "v": 1}),
        people.update({"id": 1, "email": "x@a", "v": 1}, {"id": 1, "email": "y@a", "v": 2}),
        people.upsert("c", {"id": 2, "email": "z@a", "v": 3})])
    keys = {"app.tagged": ("code",), "app.people": ("email",)}
    job = apply_once(spark, broker.bootstrap, [tagged.topic, people.topic], unique_name,
                     tmp_path, keys=keys)
    assert job.dead_letters == 0
    rows = spark.table(f"gtidmark.{unique_name}.tagged").collect()
    assert sorted((r["code"], r["v"]) for r in rows) == [("b", 5), ("c", 1)]
    rows = spark.table(f"gtidmark.{unique_name}.people").collect()
    assert sorted((r["email"], r["id"], r["v"]) for r in rows) == [("y@a", 1, 2), ("z@a", 2, 3)]
    for name, key in (("tagged", ["code"]), ("people", ["email"])):
        props = {r["key"]: r["value"] for r in spark.sql(
            f"SHOW TBLPROPERTIES gtidmark.{unique_name}.{name}").collect()}
        assert json.loads(props["gtidmark.key"]) == key


def test_keyless_changes_of_one_batch_apply_in_topic_order_one_row_each(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    changes = Changes(BAG, unique_name)
    create_topic(broker.bootstrap, changes.topic, 1)
    v, w, u, x = ({"a": a, "b": None, "x": 0.5} for a in (1, 2, 3, None))
    produce(broker.bootstrap, changes.topic, [changes.upsert("c", v), changes.upsert("r", v),
                                              changes.upsert("c", w)])
    apply_once(spark, broker.bootstrap, [changes.topic], unique_name, tmp_path)
    produce(broker.bootstrap, changes.topic, [  # one batch; per value the table holds:
        *changes.delete(v),                     # v 1 (one of the two identical rows)
        *changes.delete(u),                     # u 0 (not there: nothing to delete)
        changes.upsert("c", u),                 # u 1 (counting net changes would give 0)
        changes.upsert("c", x), *changes.delete(x),  # x 0
        changes.update(w, v),                   # w 0, v 2
        *changes.delete(v)])                    # v 1
    job = apply_once(spark, broker.bootstrap, [changes.topic], unique_name, tmp_path)
    assert job.batches == 1 and job.dead_letters == 0
    assert table_multiset(spark, f"gtidmark.{unique_name}.bag") == multiset([v, u])
