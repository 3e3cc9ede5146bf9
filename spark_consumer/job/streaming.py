"""The job's apply as a Structured Streaming `foreachBatch` callable, for users who already run
`spark.readStream.format("kafka")` queries.

A micro-batch says only how far to go: its last offset per partition. The table's offsets in
Iceberg say where to start, and the batch's records are read again from there by the job's
own reader (read_committed), decoded, MERGEd and committed with their offsets, as
`spark-apply` does. So Iceberg's offsets win over the query's checkpoint: records below them
are never applied again (a batch replayed after a crash between the Iceberg commit and the
checkpoint's commit applies nothing), and `spark-apply` and a streaming query can take over
from each other on the same tables.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import replace

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_consumer.iceberg.maintenance import Maintenance
from spark_consumer.job.batch import Job
from spark_consumer.job.options import JobOptions, UsageError, parse_options
from spark_consumer.job.session import catalog_conf
from spark_consumer.reading.planner import TP, names_topic

log = logging.getLogger("spark_consumer")


def batch_ends(batch: DataFrame) -> dict[TP, int]:
    """Each partition's end in a micro-batch of Spark's Kafka source: its last offset + 1."""
    rows = batch.groupBy("topic", "partition").agg(F.max("offset").alias("last")).collect()
    return {(str(r["topic"]), int(r["partition"])): int(r["last"]) + 1 for r in rows}


class StreamingApply:
    """`foreachBatch(StreamingApply(...))`: one Job for the whole query, driven to each
    micro-batch's ends; maintenance (--maintain-*) between batches as in spark-apply."""

    def __init__(self, spark: SparkSession, opts: JobOptions) -> None:
        self.opts = replace(opts, once=True)
        self.job = Job(spark, self.opts)
        self.maintenance = Maintenance(spark, self.opts.maintenance)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        targets = batch_ends(batch)
        foreign = sorted({t for t, _ in targets if not names_topic(t, self.opts.topics, self.opts.topic_pattern)})
        if foreign:
            raise ValueError(f"micro-batch {batch_id} has topics the job's --topics/"
                             f"--topic-pattern do not name: {', '.join(foreign)}")
        if not targets:
            return
        self.job.reload_tables()  # Iceberg's offsets, as committed by whichever writer
        first = self.job.batches
        while True:
            ranges, ends = self.job.plan(targets)
            if not any(r.size for r in ranges):
                break
            for line in self.job.run_batch(ranges, ends).lines(self.job.batches):
                log.info(line)
            self.maintenance.run_if_due(self.job.batches, self.job.tables)
        log.info("micro-batch %d: %d job batches up to its ends (0: the tables held it "
                 "already)", batch_id, self.job.batches - first)


def foreach_batch(spark: SparkSession, argv: list[str]) -> Callable[[DataFrame, int], None]:
    """The callable for `writeStream.foreachBatch`, from spark-apply's arguments (--topics or
    --topic-pattern naming the query's topics); UsageError for bad arguments.

    The session's own catalog of --catalog-name is used as it is; a session without one gets
    it from --warehouse/--catalog-conf as spark-apply's does. Launch settings (--master,
    --jars, --spark-conf...) are the session's business and ignored here.
    """
    opts = parse_options(list(argv))
    if os.environ.get("PYSPARK_PIN_THREAD", "true").lower() != "true":
        raise UsageError("PYSPARK_PIN_THREAD=false: the offsets ride in the MERGE's commit "
                         "through a per-JVM-thread setting; unset it")
    if opts.once:
        raise UsageError("--once: a streaming query's trigger decides when batches run")
    if spark.conf.get(f"spark.sql.catalog.{opts.catalog_name}", None) is None:
        for key, value in catalog_conf(opts).items():
            spark.conf.set(key, value)
    return StreamingApply(spark, opts)
