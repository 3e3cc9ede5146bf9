"""Command-line arguments of the Spark job, validated into `JobOptions`.

Bad arguments raise `UsageError` with one line naming the argument; the job exits 2.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field


class UsageError(Exception):
    """Bad arguments: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


@dataclass(frozen=True)
class JobOptions:
    """Everything the job needs to know, after validation."""

    bootstrap_servers: str
    topics: list[str] | None
    topic_pattern: str | None
    warehouse: str = "./spark-warehouse"
    catalog_name: str = "gtidmark"
    catalog_conf: dict[str, str] = field(default_factory=dict)
    namespace: str | None = None
    max_offsets_per_batch: int | None = 100_000
    once: bool = False
    trigger_interval: float = 10.0
    dead_letter: str = "gtidmark-dead-letter.jsonl"
    jars: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    local_jars: bool = True
    master: str | None = None
    spark_conf: dict[str, str] = field(default_factory=dict)
    kafka_conf: dict[str, str] = field(default_factory=dict)
    log_level: str = "INFO"

    def kafka_settings(self) -> dict[str, str]:
        """librdkafka settings for the planner and the reader tasks."""
        return {"bootstrap.servers": self.bootstrap_servers, **self.kafka_conf}


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag}: expected KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def _csv(text: str | None) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gtidmark spark-apply",
                description="Apply Debezium change topics to Iceberg tables (upserts and "
                "deletes, exactly once: offsets live in the Iceberg snapshot summary).")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--topics", help="comma-separated change topics <prefix>.<db>.<table>")
    src.add_argument("--topic-pattern", help="regex of topics to read (full match)")
    p.add_argument("--bootstrap-servers", required=True, help="Kafka bootstrap servers")
    p.add_argument("--kafka-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="extra librdkafka setting (TLS/SASL), repeatable")
    p.add_argument("--warehouse", default="./spark-warehouse",
                   help="warehouse path of the Hadoop catalog (default ./spark-warehouse)")
    p.add_argument("--catalog-name", default="gtidmark", help="Spark catalog name")
    p.add_argument("--catalog-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="spark.sql.catalog.<name>.KEY=VALUE (e.g. type=rest, uri=...); "
                   "replaces the local Hadoop catalog defaults")
    p.add_argument("--namespace", help="put every table in this namespace (default: the "
                   "database part of the topic name)")
    p.add_argument("--max-offsets-per-batch", type=int, default=100_000,
                   help="cap of offsets read per micro-batch over all partitions; 0 = no cap")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true",
                      help="process what is in the topics now, then exit")
    mode.add_argument("--trigger-interval", type=float, default=10.0, metavar="SECONDS",
                      help="seconds between micro-batches when running continuously")
    p.add_argument("--dead-letter", default="gtidmark-dead-letter.jsonl", metavar="PATH",
                   help="JSON-lines file for records that cannot be applied")
    p.add_argument("--jars", help="comma-separated extra jars for the Spark session")
    p.add_argument("--packages", help="comma-separated Maven coordinates (spark.jars.packages)")
    p.add_argument("--no-local-jars", action="store_true",
                   help="do not add the offline Iceberg jars built by `make setup`")
    p.add_argument("--master", help="Spark master (default local[2] unless spark-submit set one)")
    p.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="extra Spark setting, repeatable")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    return p


def parse_options(argv: list[str]) -> JobOptions:
    """Parse and validate; raises UsageError (one line) on any bad argument."""
    args = build_parser().parse_args(argv)
    topics = _csv(args.topics) if args.topics is not None else None
    if topics is not None and not topics:
        raise UsageError("--topics: no topic named")
    if args.topic_pattern is not None:
        try:
            re.compile(args.topic_pattern)
        except re.error as exc:
            raise UsageError(f"--topic-pattern: not a regex: {exc}") from None
    if not args.bootstrap_servers.strip():
        raise UsageError("--bootstrap-servers: empty")
    if args.max_offsets_per_batch < 0:
        raise UsageError("--max-offsets-per-batch: must be >= 0")
    if args.trigger_interval <= 0:
        raise UsageError("--trigger-interval: must be > 0 seconds")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", args.catalog_name):
        raise UsageError(f"--catalog-name: not an identifier: {args.catalog_name!r}")
    return JobOptions(
        bootstrap_servers=args.bootstrap_servers.strip(), topics=topics,
        topic_pattern=args.topic_pattern, warehouse=args.warehouse,
        catalog_name=args.catalog_name, catalog_conf=_pairs(args.catalog_conf, "--catalog-conf"),
        namespace=args.namespace, max_offsets_per_batch=args.max_offsets_per_batch or None,
        once=args.once, trigger_interval=args.trigger_interval, dead_letter=args.dead_letter,
        jars=_csv(args.jars), packages=_csv(args.packages), local_jars=not args.no_local_jars,
        master=args.master, spark_conf=_pairs(args.spark_conf, "--spark-conf"),
        kafka_conf=_pairs(args.kafka_conf, "--kafka-conf"), log_level=args.log_level)
