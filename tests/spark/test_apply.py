"""The job applies hand-made changelogs to Iceberg tables exactly (real broker, real Spark)."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from spark_consumer.offsets import table_offsets
from tests.kafka_tools import create_topic, produce
from tests.services import Broker
from tests.spark import events as ev
from tests.spark.helpers import apply_once, table_rows, topic_ends

pytestmark = pytest.mark.spark

AT = dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=dt.UTC)
Item = tuple[bytes | None, bytes | None]


class Orders:
    """A changelog of the with-schemas `orders` topic and the table it must produce."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.model: dict[int, dict[str, Any]] = {}

    def change(self, op: str, id_: int, version: int = 0) -> None:
        k = ev.key({"id": id_}, ev.KEY_FIELDS)
        if op == "d":
            self.items.append((k, ev.value("d", {"id": id_}, None, ev.ORDER_FIELDS)))
            self.items.append((k, None))  # tombstone after every delete
            self.model.pop(id_, None)
            return
        day = dt.date(2024, 1, 1) + dt.timedelta(days=id_)
        at = AT + dt.timedelta(seconds=version)
        amount = Decimal(id_ * 100 + version) / 100 - Decimal("5.55")
        after = ev.order_json(id_, f"o{id_}v{version}", amount, day, at, version % 2 == 0,
                              bytes([id_, version]))
        self.items.append((k, ev.value(op, None, after, ev.ORDER_FIELDS)))
        self.model[id_] = {"id": id_, "name": f"o{id_}v{version}", "amount": amount,
                           "day": day, "at": at.strftime("%Y-%m-%d %H:%M:%S.%f"),
                           "flag": version % 2 == 0, "blob": bytes([id_, version])}

    def expected(self) -> list[dict[str, Any]]:
        return [self.model[k] for k in sorted(self.model)]


def schemaless(op: str, id_: int, **after: Any) -> Item:
    row = {"id": id_, **after} if op != "d" else None
    before = {"id": id_} if op == "d" else None
    return json.dumps({"id": id_}).encode(), ev.value(op, before, row, None)


def test_changelog_with_and_without_schemas_gives_the_exact_table(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    orders, items = f"{unique_name}.app.orders", f"{unique_name}.app.items"
    create_topic(broker.bootstrap, orders, 2)
    create_topic(broker.bootstrap, items, 1)
    log = Orders()
    for op, id_, version in [("c", 1, 0), ("u", 1, 1), ("u", 1, 2),        # several per key
                             ("c", 2, 0), ("d", 2, 0),                      # gone in one batch
                             ("r", 3, 0), ("u", 3, 1), ("d", 3, 0), ("c", 3, 4),  # back again
                             ("d", 4, 0),                                   # delete of absent key
                             ("r", 5, 0), ("r", 6, 0), ("c", 7, 0)]:
        log.change(op, id_, version)
    produce(broker.bootstrap, orders, log.items)
    produce(broker.bootstrap, items, [
        schemaless("r", 1, name="a", qty=1, price=1.5, tags=["x"]),
        schemaless("c", 2, name="b", qty=2, price=2.5, tags=None),
        schemaless("u", 1, name="a2", qty=10, price=1.25, tags=["x", "y"]),
        schemaless("d", 2), (json.dumps({"id": 2}).encode(), None),
        schemaless("d", 9), schemaless("c", 3, name="c", qty=3, price=0.5, tags=[])])

    first = apply_once(spark, broker.bootstrap, [orders, items], unique_name, tmp_path)
    assert first.dead_letters == 0
    orders_table, items_table = f"gtidmark.{unique_name}.orders", f"gtidmark.{unique_name}.items"
    assert table_rows(spark, orders_table) == log.expected()
    assert table_rows(spark, items_table) == [
        {"id": 1, "name": "a2", "qty": 10, "price": 1.25, "tags": '["x","y"]'},
        {"id": 3, "name": "c", "qty": 3, "price": 0.5, "tags": "[]"}]
    types = {f.name: f.dataType.simpleString() for f in spark.table(orders_table).schema}
    assert types == {"id": "int", "name": "string", "amount": "decimal(10,2)", "day": "date",
                     "at": "timestamp", "flag": "boolean", "blob": "binary"}

    # A second run (a restart) resumes from the table's offsets and applies only what is new.
    later = Orders()
    later.model = dict(log.model)
    for op, id_, version in [("d", 1, 0), ("c", 2, 7), ("u", 5, 3), ("d", 4, 0)]:
        later.change(op, id_, version)
    produce(broker.bootstrap, orders, later.items)
    second = apply_once(spark, broker.bootstrap, [orders, items], unique_name, tmp_path)
    assert table_rows(spark, orders_table) == later.expected()
    assert second.batches == 1
    assert table_offsets(spark, orders_table) == {orders: topic_ends(broker.bootstrap, orders, 2)}
    assert table_offsets(spark, items_table) == {items: topic_ends(broker.bootstrap, items, 1)}
    props = {r["key"]: r["value"]
             for r in spark.sql(f"SHOW TBLPROPERTIES {orders_table}").collect()}
    assert props["format-version"] == "2"
    assert all(props[f"write.{m}.mode"] == "merge-on-read" for m in ("merge", "update", "delete"))


def test_a_new_column_in_the_events_is_added_to_the_table(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    topic = f"{unique_name}.app.people"
    create_topic(broker.bootstrap, topic, 1)
    fields = [ev.fld("id", "int64", optional=False), ev.fld("name", "string")]
    wider = [*fields, ev.fld("born", "int32", "io.debezium.time.Date")]
    k = [ev.fld("id", "int64", optional=False)]

    def change(id_: int, after: dict[str, Any], schema: list[dict[str, Any]]) -> Item:
        return ev.key({"id": id_}, k), ev.value("c", None, {"id": id_, **after}, schema)

    produce(broker.bootstrap, topic, [change(1, {"name": "ann"}, fields)])
    job = apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)
    table = f"gtidmark.{unique_name}.people"
    assert [f.name for f in spark.table(table).schema] == ["id", "name"]

    # Same Job object, no restart: the next batch carries a column the table lacks.
    produce(broker.bootstrap, topic, [change(2, {"name": "bob", "born": 365}, wider),
                                      change(1, {"name": "ann", "born": 0}, wider)])
    ranges, ends = job.plan(None)
    job.run_batch(ranges, ends)
    assert [(f.name, f.dataType.simpleString()) for f in spark.table(table).schema] == [
        ("id", "bigint"), ("name", "string"), ("born", "date")]
    assert table_rows(spark, table) == [
        {"id": 1, "name": "ann", "born": dt.date(1970, 1, 1)},
        {"id": 2, "name": "bob", "born": dt.date(1971, 1, 1)}]
