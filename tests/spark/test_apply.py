"""The job applies hand-made changelogs to Iceberg tables exactly (real broker, real Spark)."""

from __future__ import annotations

import datetime as dt
import json
import logging
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from connector.schema import Column, TableSchema
from spark_consumer.iceberg.offsets import table_offsets
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.spark.events import Changes, utc
from tests.spark.helpers import apply_once, table_rows, topic_ends
from tests.spark.test_type_decoding import ENUM, SET, all_types_schema, expected

pytestmark = pytest.mark.spark

AT = dt.datetime(2024, 1, 2, 3, 4, 5, 123456)
Item = tuple[bytes | None, bytes | None]
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
ALL_TYPES = all_types_schema(precision=12, scale=2, dt_fsp=3, ts_fsp=6, bits=12)
ALL_TYPES_ROW: dict[str, Any] = {
    "id": 1, "i8": -128, "i16": 32767, "i24": -8388608, "u32": 4294967295,
    "i64": -(2**63), "u64": 2**63, "dec": Decimal("-0.01"), "f32": 123.25, "f64": 1e-300,
    "flag": 1, "bits": 0xABC, "txt": "naïve ' \" 😀", "bin": b"\x00\x01\x00\x00\x00\x00",
    "blob": bytes(range(256)), "day": dt.date(1000, 1, 1),
    "tod": -dt.timedelta(hours=838, minutes=59, seconds=59), "dtm": dt.datetime(9999, 12, 31,
                                                                               23, 59, 59, 999000),
    "ts": dt.datetime(1970, 1, 2, 3, 4, 5, 6), "yr": 2155, "size": ENUM[2],
    "tags": frozenset(SET[1:3]), "doc": {"k": [1, {"x": None}]},
}
ORDERS = TableSchema("app", "orders", (
    Column("id", "int", nullable=False),
    Column("name", "varchar", length=40, charset="utf8mb4"),
    Column("amount", "decimal", precision=10, scale=2),
    Column("day", "date"),
    Column("at", "datetime", scale=6),
    Column("flag", "bit", length=1),
    Column("blob", "varbinary", length=10),
), ("id",))
ITEMS = TableSchema("app", "items", (
    Column("id", "int", nullable=False),
    Column("name", "varchar", length=40, charset="utf8mb4"),
    Column("qty", "int"), Column("price", "double"), Column("tags", "json"),
), ("id",))


class Orders:
    """A changelog of the with-schemas `orders` topic and the table it must produce."""

    def __init__(self, prefix: str) -> None:
        self.changes = Changes(ORDERS, prefix)
        self.items: list[Item] = []
        self.model: dict[int, dict[str, Any]] = {}

    def change(self, op: str, id_: int, version: int = 0, amount: Decimal | None = None) -> None:
        if op == "d":
            self.items += self.changes.delete(self.model.pop(id_, {"id": id_}))
            return
        day = dt.date(2024, 1, 1) + dt.timedelta(days=id_)
        at = AT + dt.timedelta(seconds=version)
        if amount is None:
            amount = Decimal(id_ * 100 + version) / 100 - Decimal("5.55")
        row = {"id": id_, "name": f"o{id_}v{version}", "amount": amount, "day": day, "at": at,
               "flag": version % 2, "blob": bytes([id_, version])}
        self.items.append(self.changes.upsert(op, row))
        self.model[id_] = row

    def expected(self) -> list[dict[str, Any]]:
        return [{**row, "at": utc(row["at"]), "flag": bool(row["flag"])}
                for _, row in sorted(self.model.items())]


def test_changelog_with_and_without_schemas_gives_the_exact_table(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    orders, items = f"{unique_name}.app.orders", f"{unique_name}.app.items"
    create_topic(broker.bootstrap, orders, 2)
    create_topic(broker.bootstrap, items, 1)
    log = Orders(unique_name)
    for op, id_, version in [("c", 1, 0), ("u", 1, 1), ("u", 1, 2),        # several per key
                             ("c", 2, 0), ("d", 2, 0),                      # gone in one batch
                             ("r", 3, 0), ("u", 3, 1), ("d", 3, 0), ("c", 3, 4),  # back again
                             ("d", 4, 0),                                   # delete of absent key
                             ("r", 5, 0), ("r", 6, 0), ("c", 7, 0)]:
        log.change(op, id_, version)
    log.change("c", 8, amount=Decimal("-29293.56"))  # on the wire: base64 "0000"
    produce(broker.bootstrap, orders, log.items)
    plain = Changes(ITEMS, unique_name, schemas=False)
    produce(broker.bootstrap, items, [
        plain.upsert("r", {"id": 1, "name": "a", "qty": 1, "price": 1.5, "tags": ["x"]}),
        plain.upsert("c", {"id": 2, "name": "b", "qty": 2, "price": 2.5, "tags": None}),
        plain.upsert("u", {"id": 1, "name": "a2", "qty": 10, "price": 1.25, "tags": ["x", "y"]}),
        *plain.delete({"id": 2}), plain.delete({"id": 9})[0],
        plain.upsert("c", {"id": 3, "name": "c", "qty": 3, "price": 0.5, "tags": []})])

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
    later = Orders(unique_name)
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
    narrow = TableSchema("app", "people", (Column("id", "bigint", nullable=False),
                                           Column("name", "varchar", length=9)), ("id",))
    wider = TableSchema("app", "people", (*narrow.columns, Column("born", "date")), ("id",))
    before, after = Changes(narrow, unique_name), Changes(wider, unique_name)
    topic = before.topic
    create_topic(broker.bootstrap, topic, 1)
    produce(broker.bootstrap, topic, [before.upsert("c", {"id": 1, "name": "ann"})])
    job = apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)
    table = f"gtidmark.{unique_name}.people"
    assert [f.name for f in spark.table(table).schema] == ["id", "name"]

    # Same Job object, no restart: the next batch carries a column the table lacks.
    produce(broker.bootstrap, topic, [
        after.upsert("c", {"id": 2, "name": "bob", "born": dt.date(1971, 1, 1)}),
        after.upsert("u", {"id": 1, "name": "ann", "born": dt.date(1970, 1, 1)})])
    ranges, ends = job.plan(None)
    job.run_batch(ranges, ends)
    assert [(f.name, f.dataType.simpleString()) for f in spark.table(table).schema] == [
        ("id", "bigint"), ("name", "string"), ("born", "date")]
    assert table_rows(spark, table) == [
        {"id": 1, "name": "ann", "born": dt.date(1970, 1, 1)},
        {"id": 2, "name": "bob", "born": dt.date(1971, 1, 1)}]


def test_rows_of_every_type_land_in_iceberg_equal_to_the_source(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    examples = [ALL_TYPES_ROW, {**ALL_TYPES_ROW, "id": 2, "dec": Decimal("-29293.56"),
                                "u64": 2**64 - 1, "f32": -0.5, "bits": 1,
                                "ts": dt.datetime(2038, 1, 1, 0, 0, 0, 999999)},
                {k: (v if k == "id" else None) for k, v in {**ALL_TYPES_ROW, "id": 3}.items()}]
    changes = Changes(ALL_TYPES, unique_name)
    create_topic(broker.bootstrap, changes.topic, 1)
    produce(broker.bootstrap, changes.topic, [changes.upsert("c", row) for row in examples])
    job = apply_once(spark, broker.bootstrap, [changes.topic], unique_name, tmp_path)
    assert job.dead_letters == 0
    frame = spark.table(f"gtidmark.{unique_name}.all_types")
    stamps = [f.name for f in frame.schema.fields if f.dataType.simpleString() == "timestamp"]
    assert stamps == ["dtm", "ts"]
    exprs = [f"unix_micros(`{f.name}`) AS `{f.name}`" if f.name in stamps else f"`{f.name}`"
             for f in frame.schema.fields]
    actual = sorted((r.asDict() for r in frame.selectExpr(*exprs).collect()),
                    key=lambda r: r["id"])
    for row in actual:
        for name in stamps:
            if row[name] is not None:
                row[name] = EPOCH + dt.timedelta(microseconds=row[name])
        if row["doc"] is not None:
            row["doc"] = json.loads(row["doc"])
    assert actual == [expected(ALL_TYPES, row) for row in examples]


def test_schemaless_precise_decimals_need_a_hint_and_are_exact_with_it(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    schema = TableSchema("app", "prices", (Column("id", "int", nullable=False),
                                           Column("price", "decimal", precision=8, scale=2)),
                         ("id",))
    hinted = Changes(schema, unique_name, schemas=False)
    plain = Changes(TableSchema("app", "guessed", schema.columns, ("id",)), unique_name,
                    schemas=False)
    rows: list[dict[str, Any]] = [{"id": i, "price": Decimal(v)}
                                  for i, v in enumerate(["-0.01", "-29293.56", "1"])]
    for changes in (hinted, plain):
        create_topic(broker.bootstrap, changes.topic, 1)
        produce(broker.bootstrap, changes.topic, [changes.upsert("c", r) for r in rows])
    with caplog.at_level(logging.WARNING, logger="spark_consumer"):
        apply_once(spark, broker.bootstrap, [hinted.topic, plain.topic], unique_name,
                   tmp_path, decimal_columns={"app.prices.price": (8, 2)})
    prices = f"gtidmark.{unique_name}.prices"
    assert spark.table(prices).schema["price"].dataType.simpleString() == "decimal(8,2)"
    assert table_rows(spark, prices) == [{**r, "price": r["price"].quantize(Decimal("0.01"))}
                                         for r in rows]
    warnings = [r.getMessage() for r in caplog.records if "schemaless" in r.getMessage()]
    assert len(warnings) == 2 and any(f"{unique_name}.guessed" in w for w in warnings)
