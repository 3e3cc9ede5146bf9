"""Files and scan time of a table after 200 batches of updates, before and after maintenance.

A table with the job's properties (merge-on-read, --rows rows) gets --batches MERGE
commits of --per-batch random updates each (the job's MERGE without Kafka: what piles up
is the same, one commit per batch). Prints its data and delete files, snapshots and the
median of 5 full scans (count and sum, after one untimed), then runs the job's
maintenance once (the state a `--maintain-every` run leaves after a batch) and prints
the same again; the scans must return the same.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyspark.sql import SparkSession

from bench.spark_apply import fill
from spark_consumer.iceberg.maintenance import FileCounts, Maintenance, file_counts
from spark_consumer.iceberg.maintenance_options import MaintenanceOptions
from spark_consumer.iceberg.offsets import commit_properties, iceberg_table
from spark_consumer.iceberg.tables import TableRef
from spark_consumer.job.options import JobOptions
from spark_consumer.job.session import build_session

OFFSETS = {"gtidmark.offsets": '{"bench":{"0":1}}'}  # as the job's commits carry them


def scan(spark: SparkSession, name: str) -> tuple[float, tuple[int, int]]:
    """Median seconds of 5 full scans (after one untimed) and what they returned."""
    query = f"SELECT count(*) AS c, sum(n) AS s FROM {name}"
    row = spark.sql(query).collect()[0]
    took = []
    for _ in range(5):
        began = time.monotonic()
        spark.sql(query).collect()
        took.append(time.monotonic() - began)
    return statistics.median(took), (int(row["c"]), int(row["s"]))


def update_batches(spark: SparkSession, name: str, batches: int, per_batch: int,
                   rows: int) -> float:
    """`batches` MERGE commits of `per_batch` random updates; returns their seconds."""
    rng = random.Random(1)
    began = time.monotonic()
    for number in range(batches):
        ids = rng.sample(range(rows), per_batch)
        spark.createDataFrame([(i, number) for i in ids], "id bigint, n bigint") \
            .createOrReplaceTempView("bench_updates")
        with commit_properties(spark, OFFSETS):
            spark.sql(f"MERGE INTO {name} t USING bench_updates s ON t.id = s.id "
                      "WHEN MATCHED THEN UPDATE SET t.n = s.n")
    return time.monotonic() - began


def line(label: str, counts: FileCounts, seconds: float) -> str:
    return (f"  {label}: data files {counts.data}, delete files {counts.deletes}, snapshots "
            f"{counts.snapshots}; full scan {seconds:.2f}s (median of 5)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000, help="rows in the table")
    parser.add_argument("--batches", type=int, default=200, help="MERGE batches of updates")
    parser.add_argument("--per-batch", type=int, default=200, help="updates per batch")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    with tempfile.TemporaryDirectory(prefix="gm-bench-") as tmp:
        opts = JobOptions(bootstrap_servers="unused", topics=[], topic_pattern=None,
                          warehouse=str(Path(tmp) / "wh"))
        spark = build_session(opts)
        ref = TableRef("gtidmark", "bench", "updated")
        fill(spark, ref.name, args.rows)
        took = update_batches(spark, ref.sql, args.batches, args.per_batch, args.rows)
        before = file_counts(iceberg_table(spark, str(ref)))
        scan_before, answer = scan(spark, ref.sql)
        began = time.monotonic()
        Maintenance(spark, MaintenanceOptions(every=1, snapshot_hours=0)).maintain(ref)
        maintained = time.monotonic() - began
        after = file_counts(iceberg_table(spark, str(ref)))
        scan_after, answer_after = scan(spark, ref.sql)
        assert answer_after == answer, (answer, answer_after)
        spark.stop()
    print(f"{args.batches} MERGE batches of {args.per_batch} updates into {args.rows} rows "
          f"(merge-on-read, local[2]) in {took:.0f}s:")
    print(line("without maintenance", before, scan_before))
    print(f"  maintenance (rewrite data and delete files, expire, orphans): {maintained:.1f}s")
    print(line("after maintenance", after, scan_after))
    print(f"  scan time ratio: {scan_before / scan_after:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
