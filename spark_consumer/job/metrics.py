"""The job's Prometheus metrics (--metrics-port): batches, records and lag per table, commit time."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

from spark_consumer.job.progress import BatchResult


class JobMetrics:
    """Updated after each batch; served over HTTP only when a port is given (a private
    registry, so several jobs in one process do not collide)."""

    def __init__(self, port: int | None, host: str = "0.0.0.0") -> None:
        self.registry = CollectorRegistry()
        reg, table = self.registry, ["table"]
        self.batches = Counter("gtidmark_spark_batches", "Micro-batches applied", registry=reg)
        self.read = Counter("gtidmark_spark_records_read", "Kafka records read", table,
                            registry=reg)
        self.applied = Counter("gtidmark_spark_records_applied",
                               "Records applied (neither tombstone nor dead-lettered)", table,
                               registry=reg)
        self.dead = Counter("gtidmark_spark_records_dead_lettered",
                            "Records written to --dead-letter", table, registry=reg)
        self.lag_records = Gauge("gtidmark_spark_lag_records",
                                 "Offsets left to the end of the table's partitions", table,
                                 registry=reg)
        self.lag_seconds = Gauge("gtidmark_spark_lag_seconds",
                                 "Now minus the Kafka timestamp of the newest record applied, "
                                 "at the end of the batch", table, registry=reg)
        self.commit = Gauge("gtidmark_spark_last_commit_seconds",
                            "How long the table's last commit (MERGE with offsets) took", table,
                            registry=reg)
        if port is not None:
            start_http_server(port, host, registry=reg)

    def observe(self, result: BatchResult) -> None:
        self.batches.inc()
        for t in result.tables:
            self.read.labels(t.table).inc(t.records)
            self.applied.labels(t.table).inc(t.applied)
            self.dead.labels(t.table).inc(t.dead_lettered)
            self.lag_records.labels(t.table).set(t.lag_records)
            if t.lag_seconds is not None:
                self.lag_seconds.labels(t.table).set(t.lag_seconds)
            self.commit.labels(t.table).set(t.commit_seconds)
