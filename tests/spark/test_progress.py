"""Each batch logs one line per table after its commit (records, applied, dead-lettered, lag
in records and seconds, commit time), and --metrics-port serves the same numbers."""

from __future__ import annotations

import logging
import re
import time
import urllib.request
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from prometheus_client.parser import text_string_to_metric_families
from pyspark.sql import SparkSession

from connector.schema import Column, TableSchema
from spark_consumer.reading import planner
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic
from tests.services import free_port
from tests.spark.events import Changes
from tests.spark.helpers import apply_once

pytestmark = pytest.mark.spark

ITEMS = TableSchema("app", "items", (Column("id", "int", nullable=False),
                                     Column("v", "varchar", length=10)), ("id",))
AGE = 3600.0  # the records' Kafka timestamps are an hour old: lag seconds is at least that
LINE = re.compile(r"batch (\d+) table (\S+): (\d+) records, (\d+) applied, (\d+) dead-lettered, "
                  r"lag (\d+) records / ([\d.]+) s, commit ([\d.]+) s")


def scrape(port: int) -> dict[tuple[str, str], float]:
    """(sample name, table label) -> value of the job's own metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {(s.name, s.labels.get("table", "")): s.value
            for f in text_string_to_metric_families(text) for s in f.samples
            if s.name.startswith("gtidmark_spark_")}


def test_two_batches_log_per_table_lines_and_serve_their_counts_and_lag_as_metrics(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    changes = Changes(ITEMS, unique_name)
    create_topic(broker.bootstrap, changes.topic, 1)
    items = [changes.upsert("c", {"id": 1, "v": "a"}), changes.upsert("c", {"id": 2, "v": "b"}),
             (changes.encoder.key({"id": 9}), b"{not json"),                  # offset 2: bad
             *changes.delete({"id": 1, "v": "a"}),                            # 3, 4: tombstone
             changes.upsert("c", {"id": 3, "v": "c"})]                        # 5
    started = time.time()
    stamp = int((started - AGE) * 1000)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for key, value in items:
        producer.produce(changes.topic, key=key, value=value, timestamp=stamp)
    assert producer.flush(30) == 0
    port = free_port()
    reads: list[object] = []  # the driver's consumers that read records (to the end)

    def consumer(settings: dict[str, object]) -> Consumer:
        if settings.get("enable.partition.eof"):
            reads.append(settings)
        return Consumer(settings)

    monkeypatch.setattr(planner, "Consumer", consumer)

    with caplog.at_level(logging.INFO, logger="spark_consumer"):
        apply_once(spark, broker.bootstrap, [changes.topic], unique_name, tmp_path,
                   max_offsets_per_batch=3, metrics_port=port)
    elapsed = time.time() - started

    table = f"gtidmark.{unique_name}.items"
    lines = [m.groups() for m in (LINE.fullmatch(r.getMessage()) for r in caplog.records) if m]
    # Batch 1: offsets 0-2 (one not JSON), 3 left; batch 2: 3-5 (a delete, its tombstone, a c).
    assert [(n, t, int(r), int(a), int(d), int(lag)) for n, t, r, a, d, lag, _, _ in lines] == [
        ("1", table, 3, 2, 1, 3), ("2", table, 3, 2, 0, 0)]
    for *_, seconds, _ in lines:
        assert AGE <= float(seconds) <= AGE + elapsed + 0.1
    # Each of the 3 plans (2 batches, then nothing left) reads to the ends; the lag's record
    # timestamps come with the tasks' results, not from a second read on the driver.
    assert len(reads) == 3

    metrics = scrape(port)
    assert {k: v for k, v in metrics.items() if k[0] != "gtidmark_spark_lag_seconds"
            and not k[0].endswith("_created") and k[0] != "gtidmark_spark_last_commit_seconds"
            } == {("gtidmark_spark_batches_total", ""): 2.0,
                  ("gtidmark_spark_records_read_total", table): 6.0,
                  ("gtidmark_spark_records_applied_total", table): 4.0,
                  ("gtidmark_spark_records_dead_lettered_total", table): 1.0,
                  ("gtidmark_spark_lag_records", table): 0.0}
    assert AGE <= metrics[("gtidmark_spark_lag_seconds", table)] <= AGE + elapsed
    assert 0 < metrics[("gtidmark_spark_last_commit_seconds", table)] < elapsed
