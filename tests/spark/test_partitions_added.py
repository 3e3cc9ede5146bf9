"""Partitions added to a change topic while the job runs: it stops before applying anything
of the grown topic, and goes on only when told the topic was idle across the change.

The topic grows from one partition to three with Kafka's CreatePartitions, as
`kafka-topics.sh --alter --partitions 3` does.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewPartitions
from pyspark.sql import SparkSession

from connector.schema import Column, TableSchema
from spark_consumer.iceberg.offsets import PARTITIONS_PROPERTY, committed_summary, table_offsets
from spark_consumer.job.batch import Job
from spark_consumer.job.options import JobOptions
from spark_consumer.reading.resume import PartitionsAddedError
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic
from tests.spark.events import Changes
from tests.spark.helpers import apply_once, table_rows

pytestmark = pytest.mark.spark

ITEMS = TableSchema("app", "items", (Column("id", "bigint", nullable=False),
                                     Column("v", "bigint")), ("id",))


def produce_to(bootstrap: str, topic: str, partition: int,
               items: list[tuple[bytes | None, bytes | None]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for key, value in items:
        producer.produce(topic, key=key, value=value, partition=partition)
    assert producer.flush(30) == 0


def grow(bootstrap: str, topic: str, partitions: int) -> None:
    """CreatePartitions, then wait until the metadata shows every partition with a leader."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_partitions([NewPartitions(topic, partitions)]).values():
        future.result(30)
    deadline = time.monotonic() + 30
    while True:
        meta = admin.list_topics(topic=topic, timeout=10).topics[topic]
        if len(meta.partitions) == partitions and \
                all(p.leader >= 0 for p in meta.partitions.values()):
            return
        assert time.monotonic() < deadline, f"{topic} did not grow to {partitions} partitions"
        time.sleep(0.05)


def test_partitions_added_mid_run_stop_the_job_until_accepted(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    changes = Changes(ITEMS, unique_name)
    topic, table = changes.topic, f"gtidmark.{unique_name}.items"
    create_topic(broker.bootstrap, topic, 1)
    model: dict[int, dict[str, Any]] = {i: {"id": i, "v": 0} for i in range(10)}
    produce_to(broker.bootstrap, topic, 0, [changes.upsert("c", r) for r in model.values()])
    warehouse = spark.conf.get("spark.sql.catalog.gtidmark.warehouse") or ""
    job = Job(spark, JobOptions(bootstrap_servers=broker.bootstrap, topics=[topic],
                                topic_pattern=None, warehouse=warehouse, namespace=unique_name,
                                dead_letter=str(tmp_path / "dl.jsonl")))
    job.run_batch(*job.plan(None))
    assert table_rows(spark, table) == [model[i] for i in range(10)]

    grow(broker.bootstrap, topic, 3)
    # A producer that sees 3 partitions places keys anew: key 5's newer change lands in 2.
    newer = [{"id": 5, "v": 1}, {"id": 7, "v": 1}]
    produce_to(broker.bootstrap, topic, 2, [changes.upsert("u", newer[0])])
    produce_to(broker.bootstrap, topic, 1, [changes.upsert("u", newer[1])])
    with pytest.raises(PartitionsAddedError, match=f"has 3 partitions, 1 when table {table} "
                       f"last committed.*--partitions-added {topic}"):
        job.plan(None)
    assert table_rows(spark, table) == [model[i] for i in range(10)]  # nothing applied
    assert table_offsets(spark, table) == {topic: {0: 10}}

    apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path,
               partitions_added=frozenset({topic}))
    model.update({r["id"]: r for r in newer})
    assert table_rows(spark, table) == [model[i] for i in range(10)]
    assert committed_summary(spark, table)[PARTITIONS_PROPERTY] == f'{{"{topic}":3}}'
    apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)  # no flag needed now
