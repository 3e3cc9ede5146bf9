"""Running the job in-process on the shared session, and reading tables back comparably."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.types import TimestampType

from spark_consumer.job.batch import Job
from spark_consumer.job.main import run
from spark_consumer.job.options import JobOptions
from spark_consumer.reading.planner import true_ends


def apply_once(spark: SparkSession, bootstrap: str, topics: list[str], namespace: str,
               tmp_path: Path, **options: Any) -> Job:
    """`spark-apply --once` on the shared session; returns the Job (counters, offsets)."""
    conf = spark.conf.get("spark.sql.catalog.gtidmark.warehouse") or ""
    opts = JobOptions(bootstrap_servers=bootstrap, topics=topics, topic_pattern=None,
                      warehouse=conf, namespace=namespace, once=True,
                      dead_letter=str(tmp_path / "dead-letter.jsonl"), **options)
    job = Job(spark, opts)
    run(job)
    return job


def table_rows(spark: SparkSession, name: str, key: str = "id") -> list[dict[str, Any]]:
    """Rows as dicts ordered by `key`; timestamps as UTC strings (session time zone is UTC)."""
    frame = spark.table(name)
    cols = [f"CAST(`{f.name}` AS STRING) AS `{f.name}`" if isinstance(f.dataType, TimestampType)
            else f"`{f.name}`" for f in frame.schema.fields]
    rows = [r.asDict() for r in frame.selectExpr(*cols).collect()]
    return sorted(rows, key=lambda r: r[key])


def topic_ends(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    ends = true_ends({"bootstrap.servers": bootstrap}, [(topic, p) for p in range(partitions)])
    return {p: e for (_, p), e in ends.items()}
