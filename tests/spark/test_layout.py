"""--partition-by / --sort-by: tables created partitioned and sorted, evolved when the options
change, bad options refused at start (real broker, real Spark)."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from connector.schema import Column, TableSchema
from spark_consumer.iceberg.layout_spec import parse_partition_by, parse_sort_by
from spark_consumer.job.main import main
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.spark.events import Changes
from tests.spark.helpers import apply_once, table_rows

pytestmark = pytest.mark.spark

ORDERS = TableSchema("shop", "orders", (
    Column("id", "int", nullable=False), Column("region", "varchar", length=10),
    Column("at", "datetime", scale=6)), ("id",))
BASE = dt.datetime(2026, 3, 1, 22, 0)


def order(id_: int, version: int) -> dict[str, Any]:
    return {"id": id_, "region": f"r{id_ % 3}v{version}",
            "at": BASE + dt.timedelta(hours=id_ * 7 + version)}


def shown(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "at": str(row["at"])}  # as CAST(timestamp AS STRING) shows whole seconds


def layout(partition: str | None = None, sort: str | None = None) -> dict[str, Any]:
    """JobOptions fields as `--partition-by shop.orders=...` / `--sort-by ...` give them."""
    return {"partition_by": parse_partition_by([f"shop.orders={partition}"] if partition
                                               is not None else []),
            "sort_by": parse_sort_by([f"shop.orders={sort}"] if sort is not None else [])}


def spec_of(spark: SparkSession, table: str) -> list[str]:
    """The table's current partitioning as DESCRIBE shows it (`Part 0` ...)."""
    rows = spark.sql(f"DESCRIBE TABLE {table}").collect()
    return [r["data_type"] for r in rows if str(r["col_name"]).startswith("Part ")]


def properties(spark: SparkSession, table: str) -> dict[str, str]:
    return {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {table}").collect()}


def cli(spark: SparkSession, broker: Broker, topic: str, namespace: str, tmp_path: Path,
        *extra: str) -> list[str]:
    """`gtidmark spark-apply --once` arguments for `topic` on the shared warehouse."""
    warehouse = spark.conf.get("spark.sql.catalog.gtidmark.warehouse") or ""
    return ["--bootstrap-servers", broker.bootstrap, "--topics", topic, "--warehouse", warehouse,
            "--namespace", namespace, "--once", "--dead-letter", str(tmp_path / "dl.jsonl"),
            *extra]


def last_files(spark: SparkSession, table: str) -> tuple[int, int]:
    """Data and delete files the table's last commit added."""
    summary = spark.sql(f"SELECT summary FROM {table}.snapshots ORDER BY committed_at DESC "
                        f"LIMIT 1").collect()[0]["summary"]
    return (int(summary.get("added-data-files", 0)),
            int(summary.get("added-delete-files", 0)))


def test_a_partitioned_sorted_table_is_applied_equal_to_the_source_one_file_per_bucket(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    changes = Changes(ORDERS, unique_name)
    topic, table = changes.topic, f"gtidmark.{unique_name}.orders"
    create_topic(broker.bootstrap, topic, 4)  # four ranges: four tasks read and write
    model = {i: order(i, 0) for i in range(200)}
    produce(broker.bootstrap, topic, [changes.upsert("c", r) for r in model.values()])
    apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path,
               **layout("bucket(4, id)", "region DESC, id"))
    assert spec_of(spark, table) == ["bucket(4, id)"]
    props = properties(spark, table)
    assert props["sort-order"] == "region DESC NULLS LAST, id ASC NULLS FIRST"
    assert props["write.merge.distribution-mode"] == "hash"

    files = {}  # one batch of updates and deletes: Iceberg's `none` against the job's `hash`
    for version, mode in enumerate(("none", "hash"), 1):
        spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('write.distribution-mode'='{mode}',"
                  f" 'write.merge.distribution-mode'='{mode}')")
        items = []
        for i in range(version, 200, 2):
            model[i] = order(i, version)
            items.append(changes.upsert("u", model[i]))
        for i in range(version * 7, 200, 50):
            items += changes.delete(model.pop(i))
        produce(broker.bootstrap, topic, items)
        # A batch large enough to keep Spark's 4 shuffle partitions: 4 writing tasks.
        spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
        try:
            apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)  # mode as set
        finally:
            spark.conf.unset("spark.sql.adaptive.coalescePartitions.enabled")
        files[mode] = last_files(spark, table)
        assert table_rows(spark, table) == [shown(model[k]) for k in sorted(model)]
    print(f"files one batch added over 4 buckets (data, delete): {files}")
    assert files["hash"] == (4, 4) and files["none"][0] > 4, files


def test_changed_options_evolve_the_spec_and_sort_order_and_keep_the_rows(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> None:
    changes = Changes(ORDERS, unique_name)
    topic, table = changes.topic, f"gtidmark.{unique_name}.orders"
    create_topic(broker.bootstrap, topic, 1)
    model = {i: order(i, 0) for i in range(30)}
    produce(broker.bootstrap, topic, [changes.upsert("c", r) for r in model.values()])
    apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path,
               **layout("days(at), region", "id"))
    assert spec_of(spark, table) == ["days(at)", "region"]

    later = {i: order(i, 1) for i in range(20, 45)}
    model.update(later)
    produce(broker.bootstrap, topic, [changes.upsert("u", r) for r in later.values()])
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="spark_consumer"):
        apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path,
                   **layout("hours(at), truncate(2, region)", "at DESC"))
    changed = [r.getMessage().removeprefix(f"table {table}: ") for r in caplog.records
               if "partition field" in r.getMessage() or "sort order" in r.getMessage()]
    assert changed == [
        "partition field days(`at`) replaced by hours(`at`) (earlier files keep days(`at`))",
        "partition field `region` replaced by truncate(2, `region`) (earlier files keep `region`)",
        "sort order now `at` DESC NULLS LAST (earlier files keep theirs)"]
    assert spec_of(spark, table) == ["hours(at)", "truncate(2, region)"]
    assert properties(spark, table)["sort-order"] == "at DESC NULLS LAST"
    assert properties(spark, table)["write.distribution-mode"] == "hash"  # not ORDERED BY's
    assert table_rows(spark, table) == [shown(model[k]) for k in sorted(model)]
    specs = spark.sql(f"SELECT DISTINCT spec_id FROM {table}.partitions").collect()
    assert len(specs) == 2, "files of the first spec and of the evolved one"

    apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path,
               **layout("", ""))  # `DB.TABLE=`: unpartitioned and unsorted from now on
    # (nothing new to apply: the options alone evolve the table when the job starts)
    assert spec_of(spark, table) == [] and "sort-order" not in properties(spark, table)
    assert table_rows(spark, table) == [shown(model[k]) for k in sorted(model)]

    capsys.readouterr()  # an option naming a column the existing table lacks: refused at start
    assert main(cli(spark, broker, topic, unique_name, tmp_path,
                    "--partition-by", "shop.orders=bucket(4, gone)")) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("error: --partition-by: table shop.orders has no column 'gone' (columns: id, "
                   "region, at)"), err
    assert spec_of(spark, table) == []


@pytest.mark.parametrize(("argv", "message"), [
    (["--partition-by", "shop.orders=bucket(id)"], "bucket needs a width > 0"),
    (["--partition-by", "shop.orders=weeks(at)"], "unknown transform 'weeks'"),
    (["--partition-by", "orders=id"], "expected DB.TABLE=TERM"),
    (["--partition-by", "shop.ordrs=id"], "shop.ordrs is not the DB.TABLE of any topic"),
    (["--sort-by", "shop.orders=id UP"], "is not a column or TRANSFORM(col)"),
    (["--partition-by", "shop.orders=days(nope)"], "table shop.orders has no column 'nope'"),
    (["--partition-by", "shop.orders=hours(region)"],
     "hours(`region`) cannot apply to column 'region' of shop.orders: its type is string"),
])
def test_a_bad_layout_option_is_refused_at_start_with_exit_2_and_one_line(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    changes = Changes(ORDERS, unique_name)
    topic, table = changes.topic, f"gtidmark.{unique_name}.orders"
    create_topic(broker.bootstrap, topic, 1)
    produce(broker.bootstrap, topic, [changes.upsert("c", order(i, 0)) for i in range(3)])
    capsys.readouterr()
    assert main(cli(spark, broker, topic, unique_name, tmp_path, *argv)) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err, err
    assert not spark.catalog.tableExists(table), "refused before the table was created"
