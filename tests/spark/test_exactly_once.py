"""SIGKILL of the job in the middle of a batch, then a rerun: the table is as if never killed."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from connector.schema import Column, TableSchema
from spark_consumer.iceberg.offsets import table_offsets
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.spark.events import Changes
from tests.spark.helpers import table_rows, topic_ends

pytestmark = pytest.mark.spark

COUNTERS = TableSchema("app", "counters", (
    Column("id", "bigint", nullable=False), Column("n", "bigint"),
    Column("s", "varchar", length=10, charset="utf8mb4")), ("id",))


def changelog(changes: Changes, count: int, keys: int,
              seed: int) -> tuple[list[Any], dict[int, dict[str, Any]]]:
    """Random c/u/d (+tombstone) changes and the final rows they leave."""
    rng = random.Random(seed)
    items: list[Any] = []
    model: dict[int, dict[str, Any]] = {}
    for n in range(count):
        id_ = rng.randrange(keys)
        if id_ in model and rng.random() < 0.25:
            items += changes.delete(model.pop(id_))
            continue
        row = {"id": id_, "n": n, "s": f"v{n}"}
        items.append(changes.upsert("u" if id_ in model else "c", row))
        model[id_] = row
    return items, model


def spark_apply(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    return subprocess.Popen([sys.executable, "-m", "spark_consumer", *args], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def test_killed_mid_batch_and_rerun_gives_the_same_table_and_offsets(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    changes = Changes(COUNTERS, unique_name)
    topic = changes.topic
    create_topic(broker.bootstrap, topic, 2)
    items, model = changelog(changes, 6000, 700, seed=5)
    produce(broker.bootstrap, topic, items)
    warehouse = spark.conf.get("spark.sql.catalog.gtidmark.warehouse") or ""
    args = ["--bootstrap-servers", broker.bootstrap, "--topics", topic, "--warehouse", warehouse,
            "--namespace", unique_name, "--once", "--max-offsets-per-batch", "1500",
            "--dead-letter", str(tmp_path / "dl.jsonl")]
    table = f"gtidmark.{unique_name}.counters"

    killed = spark_apply(args, tmp_path)
    assert killed.stderr is not None
    merges, log = 0, []
    for line in killed.stderr:
        log.append(line)
        if "MERGE started" in line:
            merges += 1
            if merges == 2:  # the second batch's MERGE is running: kill the whole job
                time.sleep(random.uniform(0.0, 2.0))
                os.killpg(killed.pid, signal.SIGKILL)
                break
    assert killed.wait(30) == -signal.SIGKILL, "".join(log[-20:])
    ends = topic_ends(broker.bootstrap, topic, 2)
    assert table_offsets(spark, table) != {topic: ends}  # it really stopped half way

    rerun = spark_apply(args, tmp_path)
    _, err = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, err[-3000:]
    assert "caught up" in err
    assert table_rows(spark, table) == [model[k] for k in sorted(model)]
    assert table_offsets(spark, table) == {topic: ends}
