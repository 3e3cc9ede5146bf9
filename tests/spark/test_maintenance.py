"""Table maintenance run by the job between batches: fewer files, same rows, resumable offsets."""

from __future__ import annotations

import logging
import random
import re
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from connector.schema import Column, TableSchema
from spark_consumer.iceberg.maintenance import Maintenance, offsets_depth
from spark_consumer.iceberg.maintenance_options import MaintenanceOptions
from spark_consumer.iceberg.offsets import OFFSETS_PROPERTY, iceberg_table, table_offsets
from spark_consumer.iceberg.tables import TableRef
from spark_consumer.job.options import UsageError, parse_options
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.spark.events import Changes
from tests.spark.helpers import apply_once, table_rows, topic_ends

pytestmark = pytest.mark.spark

COUNTERS = TableSchema("app", "counters", (
    Column("id", "bigint", nullable=False), Column("n", "bigint"),
    Column("s", "varchar", length=10, charset="utf8mb4")), ("id",))
LINE = re.compile(r"data files (\d+) -> (\d+), delete files (\d+) -> (\d+)")


def changelog(changes: Changes, count: int, model: dict[int, dict[str, Any]],
              rng: random.Random) -> list[Any]:
    """Exactly `count` records of random c/u/d (+tombstone) changes; `model` follows them."""
    items: list[Any] = []
    while len(items) < count:
        id_ = rng.randrange(120)
        if id_ in model and rng.random() < 0.2 and len(items) + 2 <= count:
            items += changes.delete(model.pop(id_))
            continue
        row = {"id": id_, "n": len(items), "s": f"v{len(items)}"}
        items.append(changes.upsert("u" if id_ in model else "c", row))
        model[id_] = row
    return items


def test_maintenance_after_3_batches_shrinks_files_keeps_rows_and_a_rerun_resumes(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    changes = Changes(COUNTERS, unique_name)
    topic, table = changes.topic, f"gtidmark.{unique_name}.counters"
    create_topic(broker.bootstrap, topic, 1)
    model: dict[int, dict[str, Any]] = {}
    rng = random.Random(7)
    produce(broker.bootstrap, topic, changelog(changes, 300, model, rng))
    caplog.set_level(logging.INFO, logger="spark_consumer.iceberg.maintenance")
    job = apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path,
                     max_offsets_per_batch=100,
                     maintenance=MaintenanceOptions(every=3, snapshot_hours=0))
    assert job.batches == 3
    lines = [r.getMessage() for r in caplog.records if "maintained" in r.getMessage()]
    assert len(lines) == 1, lines
    for line in lines:
        match = LINE.search(line)
        assert match is not None, line
        data_before, data_after, deletes_before, deletes_after = map(int, match.groups())
        assert data_after < data_before and deletes_after < deletes_before, line
    assert table_rows(spark, table) == [model[k] for k in sorted(model)]

    ice = iceberg_table(spark, table)
    assert not ice.currentSnapshot().summary().containsKey(OFFSETS_PROPERTY)  # compaction's
    assert ice.snapshots().size() == offsets_depth(ice)  # all before the offsets expired
    ends = topic_ends(broker.bootstrap, topic, 1)
    assert table_offsets(spark, table) == {topic: ends}

    produce(broker.bootstrap, topic, changelog(changes, 40, model, rng))
    rerun = apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path,
                       max_offsets_per_batch=100)
    assert rerun.batches == 1  # resumed at offset 300, not from 0
    assert table_rows(spark, table) == [model[k] for k in sorted(model)]
    assert table_offsets(spark, table) == {topic: topic_ends(broker.bootstrap, topic, 1)}


def test_a_failed_maintenance_is_one_warning_line_and_no_exception(
        spark: SparkSession, unique_name: str, caplog: pytest.LogCaptureFixture) -> None:
    maintenance = Maintenance(spark, MaintenanceOptions(every=1))
    maintenance.maintain(TableRef("gtidmark", unique_name, "missing"))
    lines = [r for r in caplog.records if r.name == "spark_consumer.iceberg.maintenance"]
    assert [r.levelno for r in lines] == [logging.WARNING]
    assert "maintenance failed, the job goes on" in lines[0].getMessage()
    assert "\n" not in lines[0].getMessage()


def test_maintenance_options_refuse_an_orphan_age_under_24_hours() -> None:
    base = ["--bootstrap-servers", "k:9092", "--topics", "a.b.c"]
    opts = parse_options([*base, "--maintain-every", "5", "--maintain-interval", "30",
                          "--maintain-keep-snapshots", "0", "--maintain-orphan-age", "48"])
    assert opts.maintenance == MaintenanceOptions(5, 30.0, 0.0, 48.0)
    assert not parse_options(base).maintenance.enabled
    with pytest.raises(UsageError, match="--maintain-orphan-age: must be >= 24 hours"):
        parse_options([*base, "--maintain-orphan-age", "1"])


def test_maintenance_is_due_by_batch_count_or_minutes_and_only_after_a_new_batch(
        spark: SparkSession, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr("spark_consumer.iceberg.maintenance.time.monotonic", lambda: clock[0])
    by_count = Maintenance(spark, MaintenanceOptions(every=3))
    assert [by_count.due(n) for n in (1, 2, 3)] == [False, False, True]
    by_count.run_if_due(3, {})
    assert [by_count.due(n) for n in (4, 5, 6)] == [False, False, True]
    by_time = Maintenance(spark, MaintenanceOptions(interval=5))
    clock[0] += 299
    assert not by_time.due(1)
    clock[0] += 1
    assert by_time.due(1) and not by_time.due(0)  # 5 minutes, but no batch since: not due
    by_time.run_if_due(1, {})
    clock[0] += 600
    assert not by_time.due(1) and by_time.due(2)
