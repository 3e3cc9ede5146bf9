"""Spark rows merged per second: 100,000 changes into a 1,000,000-row Iceberg table (local[2]).

Prints the raw limit (one MERGE from an in-memory DataFrame) and the job's rate for the same
changes read from Kafka as Debezium JSON-with-schemas (read + decode + reduce + MERGE), and
their ratio. Both run once untimed first (the JVM's compiled code and the Python workers
warm: MERGE alone is ~40% slower on the first run), then in alternating order for --rounds
rounds, each on fresh tables: one pair of runs varies by +-15% on a 2-core VM, so the
medians are what to quote.
Starts its own local broker and warehouse in a temporary directory.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyspark.sql import SparkSession

from spark_consumer.decoding.dbztypes import ColumnSpec
from spark_consumer.iceberg.tables import TableRef, create_table
from spark_consumer.job.batch import Job
from spark_consumer.job.options import JobOptions
from spark_consumer.job.progress import BatchResult
from spark_consumer.job.session import build_session
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic

TABLE_ROWS = 1_000_000
CHANGES = 100_000
COLUMNS = [ColumnSpec("id", "bigint"), ColumnSpec("n", "bigint"), ColumnSpec("s", "string")]
FIELDS = [{"field": "id", "type": "int64", "optional": False},
          {"field": "n", "type": "int64", "optional": True},
          {"field": "s", "type": "string", "optional": True}]


def fill(spark: SparkSession, name: str, table_rows: int) -> None:
    ref = TableRef("gtidmark", "bench", name)
    create_table(spark, ref, COLUMNS, ["id"])
    spark.range(table_rows).selectExpr("id", "id AS n", "concat('row', id) AS s") \
        .writeTo(ref.sql).append()


def changes(seed: int, table_rows: int, count: int) -> list[tuple[str, int]]:
    """(op, id): 80% updates of existing rows, 10% inserts of new ids, 10% deletes."""
    rng = random.Random(seed)
    ids = rng.sample(range(table_rows), int(count * 0.9))
    out = [("u", i) for i in ids[:int(count * 0.8)]] + [("d", i) for i in ids[int(count * 0.8):]]
    out += [("c", table_rows + i) for i in range(count - len(out))]
    rng.shuffle(out)
    return out


def raw_merge(spark: SparkSession, ops: list[tuple[str, int]], name: str = "raw") -> float:
    rows = [(op, i, -i, f"changed{i}") for op, i in ops]
    spark.createDataFrame(rows, "op string, id bigint, n bigint, s string") \
        .createOrReplaceTempView("bench_src")
    began = time.monotonic()
    spark.sql(f"MERGE INTO gtidmark.bench.{name} t USING bench_src s ON t.id = s.id "
              "WHEN MATCHED AND s.op = 'd' THEN DELETE "
              "WHEN MATCHED THEN UPDATE SET t.n = s.n, t.s = s.s "
              "WHEN NOT MATCHED AND s.op <> 'd' THEN INSERT (id, n, s) VALUES (s.id, s.n, s.s)")
    return time.monotonic() - began


def produce_changes(bootstrap: str, topic: str, ops: list[tuple[str, int]]) -> None:
    from confluent_kafka import Producer

    key_schema = {"type": "struct", "fields": FIELDS[:1], "optional": False}
    row_schema = {"type": "struct", "fields": FIELDS, "optional": True}
    schema = {"type": "struct", "optional": False, "fields": [
        dict(row_schema, field="before"), dict(row_schema, field="after"),
        {"field": "op", "type": "string", "optional": False}]}
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for op, i in ops:
        row = {"id": i, "n": -i, "s": f"changed{i}"}
        payload = {"before": row if op == "d" else None, "after": None if op == "d" else row,
                   "op": op}
        key = json.dumps({"schema": key_schema, "payload": {"id": i}})
        producer.produce(topic, key=key, value=json.dumps({"schema": schema, "payload": payload}))
        producer.poll(0)
    assert producer.flush(60) == 0


def job_batch(spark: SparkSession, opts: JobOptions) -> tuple[float, BatchResult]:
    """Seconds and result of one job batch over everything in `opts.topics`."""
    job = Job(spark, opts)
    ranges, ends = job.plan(None)
    began = time.monotonic()
    result = job.run_batch(ranges, ends)
    return time.monotonic() - began, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=TABLE_ROWS, help="rows in the table")
    parser.add_argument("--changes", type=int, default=CHANGES, help="changes to apply")
    parser.add_argument("--rounds", type=int, default=5,
                        help="timed rounds, each MERGE alone and the job on fresh tables")
    parser.add_argument("--kafka-reader", choices=("python", "spark"), default="python",
                        help="the job's one-pass reader (spark-apply --kafka-reader)")
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with tempfile.TemporaryDirectory(prefix="gm-bench-") as tmp:
        broker = Broker(Path(tmp))
        broker.start()
        try:
            topics = [f"bench.bench.job{n}" for n in range(args.rounds + 1)]
            for name in topics:
                create_topic(broker.bootstrap, name, 2)
            ops = changes(1, args.rows, args.changes)
            for name in topics:
                produce_changes(broker.bootstrap, name, ops)
            opts = JobOptions(bootstrap_servers=broker.bootstrap, topics=topics[:1],
                              topic_pattern=None, warehouse=str(Path(tmp) / "wh"), once=True,
                              max_offsets_per_batch=None,
                              dead_letter=str(Path(tmp) / "dl.jsonl"),
                              kafka_reader=args.kafka_reader)
            spark = build_session(opts)
            raws, tooks = [], []
            for n, topic in enumerate(topics):  # round 0 warms the JVM and the workers
                fill(spark, f"raw{n}", args.rows)
                fill(spark, f"job{n}", args.rows)
                job_first = n % 2 == 1
                if job_first:
                    took, result = job_batch(spark, dataclasses.replace(opts, topics=[topic]))
                raw = raw_merge(spark, ops, f"raw{n}")
                if not job_first:
                    took, result = job_batch(spark, dataclasses.replace(opts, topics=[topic]))
                assert result.records == args.changes and result.bad == 0, result.line(1)
                count = spark.table(f"gtidmark.bench.job{n}").count()
                assert count == spark.table(f"gtidmark.bench.raw{n}").count(), count
                if n:
                    raws.append(raw)
                    tooks.append(took)
            spark.stop()
        finally:
            broker.stop()
    print(f"spark merge, {args.changes} changes into {args.rows} rows "
          f"(merge-on-read, local[2], --kafka-reader {args.kafka_reader}), {args.rounds} rounds:")
    for n, (raw, took) in enumerate(zip(raws, tooks, strict=True)):
        print(f"  round {n + 1}: MERGE alone {raw:.2f}s, job {took:.2f}s, "
              f"ratio {raw / took:.2f}")
    raw, took = statistics.median(raws), statistics.median(tooks)
    print(f"  raw MERGE from a DataFrame (median): {args.changes / raw:,.0f} rows/s "
          f"({raw:.2f}s)")
    print(f"  spark-apply batch (Kafka read + decode + MERGE, median): "
          f"{args.changes / took:,.0f} rows/s ({took:.2f}s)")
    print(f"  ratio job/raw (medians): {raw / took:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
