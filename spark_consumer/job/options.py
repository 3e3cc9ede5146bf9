"""Command-line arguments of the Spark job, validated into `JobOptions`.

Bad arguments raise `UsageError` with one line naming the argument; the job exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from spark_consumer.iceberg import maintenance_options
from spark_consumer.iceberg.layout_spec import (
    Field,
    SortField,
    SpecError,
    check_tables,
    parse_partition_by,
    parse_sort_by,
)
from spark_consumer.iceberg.maintenance_options import MaintenanceOptions
from spark_consumer.reading.javakafka import NoJavaSetting, java_options

KAFKA_CONFIG_ENV = "GTIDMARK_KAFKA_CONFIG"
CATALOG_CONFIG_ENV = "GTIDMARK_CATALOG_CONFIG"


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
    catalog_conf: dict[str, str] = field(default_factory=dict, repr=False)
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
    kafka_conf: dict[str, str] = field(default_factory=dict, repr=False)
    kafka_reader: str = "python"  # "spark": Spark's Kafka source and from_json in the JVM
    log_level: str = "INFO"
    metrics_port: int | None = None  # Prometheus endpoint; off by default
    restart_topics: frozenset[str] = frozenset()
    partitions_added: frozenset[str] = frozenset()
    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)  # --key DB.TABLE -> columns
    decimal_columns: dict[str, tuple[int, int]] = field(default_factory=dict)
    maintenance: MaintenanceOptions = field(default_factory=MaintenanceOptions)
    partition_by: dict[str, tuple[Field, ...]] = field(default_factory=dict)
    sort_by: dict[str, tuple[SortField, ...]] = field(default_factory=dict)

    def kafka_settings(self) -> dict[str, str]:
        """librdkafka settings for the planner and the reader tasks."""
        return {"bootstrap.servers": self.bootstrap_servers, **self.kafka_conf}

    def bootstrap_setting(self) -> str:
        """Where the broker address the job uses came from, for error lines."""
        if "bootstrap.servers" in self.kafka_conf:
            return "bootstrap.servers of --kafka-config/--kafka-conf"
        return "--bootstrap-servers"


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag}: expected KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def read_settings_file(path: str, flag: str) -> dict[str, str]:
    """Settings (librdkafka, catalog) from a file: a JSON object, or Java properties
    (key=value lines): secrets kept off the command line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{flag}: cannot read {path} ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{flag}: {path} is not UTF-8 text (byte {exc.object[exc.start]:#04x} "
                         f"at offset {exc.start}); save it as UTF-8") from None
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{flag}: {path} is not valid JSON (line {exc.lineno})") from None
        if not isinstance(doc, dict):
            raise UsageError(f"{flag}: {path} must hold a JSON object of settings")
        return {str(k): str(v).lower() if isinstance(v, bool) else str(v)
                for k, v in doc.items()}
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", "!")):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{flag}: {path} line {number}: expected key=value")
        out[key.strip()] = value.strip()
    return out


def _decimal_hints(values: list[str]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for item in values:
        match = re.fullmatch(r"(.+)=(\d+),(\d+)", item)
        if match is None or match.group(1).count(".") < 2:
            raise UsageError(f"--decimal-column: expected DB.TABLE.COLUMN=PRECISION,SCALE, "
                             f"got {item!r}")
        precision, scale = int(match.group(2)), int(match.group(3))
        if not 1 <= precision <= 38 or scale > precision:
            raise UsageError(f"--decimal-column: {item!r}: need 1 <= precision <= 38 and "
                             f"scale <= precision")
        out[match.group(1)] = (precision, scale)
    return out


def _keys(values: list[str]) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for item in values:
        table, _, columns = item.partition("=")
        names = tuple(_csv(columns))
        if table.count(".") != 1 or not all(table.split(".")) or not names:
            raise UsageError(f"--key: expected DB.TABLE=COLUMN[,COLUMN...], got {item!r}")
        out[table] = names
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
                   help="extra librdkafka setting, repeatable (visible in ps: put secrets in "
                   "--kafka-config)")
    p.add_argument("--kafka-config", metavar="FILE",
                   help="librdkafka settings (TLS/SASL secrets) from a properties or JSON "
                   f"file; default: the file named by ${KAFKA_CONFIG_ENV}")
    p.add_argument("--kafka-reader", choices=("python", "spark"), default="python",
                   help="how a batch that fits its table is read: python (librdkafka and "
                        "Arrow in the executors' Python, the default: measured faster) or "
                        "spark (Spark's Kafka source and from_json in the JVM)")
    p.add_argument("--restart-topics", metavar="TOPICS",
                   help="comma-separated topics that were recreated: read them from their "
                   "beginning instead of stopping")
    p.add_argument("--partitions-added", metavar="TOPICS",
                   help="comma-separated topics that gained partitions while the connector "
                   "was stopped and after this job had applied all it wrote: go on with the "
                   "new partition count instead of stopping")
    p.add_argument("--key", action="append", default=[], metavar="DB.TABLE=COL[,COL]",
                   help="merge this table on these columns instead of the record key (a table "
                   "without a primary key is otherwise matched on whole rows); repeatable")
    p.add_argument("--decimal-column", action="append", default=[],
                   metavar="DB.TABLE.COLUMN=P,S",
                   help="schemaless JSON: this column is a precise DECIMAL(P,S) (base64), "
                   "repeatable")
    p.add_argument("--partition-by", action="append", default=[],
                   metavar="DB.TABLE=TRANSFORM(col)[,...]",
                   help="Iceberg partitioning of a table: col, bucket(N, col), truncate(W, col), "
                   "years/months/days/hours(col); evolves an existing table; repeatable")
    p.add_argument("--sort-by", action="append", default=[],
                   metavar="DB.TABLE=col [ASC|DESC][,...]",
                   help="Iceberg write sort order of a table; evolves an existing table; "
                   "repeatable")
    p.add_argument("--warehouse", default="./spark-warehouse",
                   help="warehouse path of the Hadoop catalog (default ./spark-warehouse)")
    p.add_argument("--catalog-name", default="gtidmark", help="Spark catalog name (default gtidmark)")
    p.add_argument("--catalog-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="spark.sql.catalog.<name>.KEY=VALUE (e.g. type=rest, uri=...); "
                   "replaces the local Hadoop catalog defaults (visible in ps: put secrets "
                   "in --catalog-config)")
    p.add_argument("--catalog-config", metavar="FILE",
                   help="catalog settings (credentials, s3.secret-access-key, hadoop.*) from a "
                   "properties or JSON file, like --catalog-conf; default: the file named by "
                   f"${CATALOG_CONFIG_ENV}")
    p.add_argument("--namespace", help="put every table in this namespace (default: the "
                   "database part of the topic name)")
    p.add_argument("--max-offsets-per-batch", type=int, default=100_000,
                   help="cap of offsets read per micro-batch over all partitions; 0 = no cap "
                   "(default 100000)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true",
                      help="process what is in the topics now, then exit")
    mode.add_argument("--trigger-interval", type=float, default=10.0, metavar="SECONDS",
                      help="seconds between micro-batches when running continuously "
                      "(default 10)")
    p.add_argument("--dead-letter", default="gtidmark-dead-letter.jsonl", metavar="PATH",
                   help="JSON-lines file for records that cannot be applied "
                   "(default gtidmark-dead-letter.jsonl)")
    p.add_argument("--jars", help="comma-separated extra jars for the Spark session")
    p.add_argument("--packages", help="comma-separated Maven coordinates (spark.jars.packages)")
    p.add_argument("--no-local-jars", action="store_true",
                   help="do not add the offline Iceberg jars built by `make setup`")
    p.add_argument("--master", help="Spark master (default local[2] unless spark-submit set one)")
    p.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="extra Spark setting, repeatable")
    maintenance_options.add_arguments(p)
    p.add_argument("--log-level", default="INFO", type=str.upper,
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   help="logging threshold (default INFO)")
    p.add_argument("--metrics-port", type=int, metavar="PORT",
                   help="serve Prometheus metrics on this port (default: off)")
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
    if args.metrics_port is not None and not 0 < args.metrics_port < 65536:
        raise UsageError("--metrics-port: must be 1-65535")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", args.catalog_name):
        raise UsageError(f"--catalog-name: not an identifier: {args.catalog_name!r}")
    kafka_conf = _kafka_conf(args)
    if args.kafka_reader == "spark":
        try:
            java_options({"bootstrap.servers": args.bootstrap_servers, **kafka_conf})
        except NoJavaSetting as exc:
            raise UsageError(f"--kafka-reader spark: {exc}; use --kafka-reader python") from None
    try:
        partition_by, sort_by = parse_partition_by(args.partition_by), parse_sort_by(args.sort_by)
        if topics is not None:
            check_tables(sorted({*partition_by, *sort_by}), topics)
        maintenance = maintenance_options.from_args(args)
    except (SpecError, maintenance_options.ScheduleError) as exc:
        raise UsageError(str(exc)) from None
    return JobOptions(
        bootstrap_servers=args.bootstrap_servers.strip(), topics=topics,
        topic_pattern=args.topic_pattern, warehouse=args.warehouse,
        catalog_name=args.catalog_name, catalog_conf=_catalog_conf(args),
        namespace=args.namespace, max_offsets_per_batch=args.max_offsets_per_batch or None,
        once=args.once, trigger_interval=args.trigger_interval, dead_letter=args.dead_letter,
        jars=_csv(args.jars), packages=_csv(args.packages), local_jars=not args.no_local_jars,
        master=args.master, spark_conf=_pairs(args.spark_conf, "--spark-conf"),
        kafka_conf=kafka_conf, kafka_reader=args.kafka_reader, log_level=args.log_level,
        metrics_port=args.metrics_port,
        keys=_keys(args.key), restart_topics=frozenset(_csv(args.restart_topics)),
        partitions_added=frozenset(_csv(args.partitions_added)),
        decimal_columns=_decimal_hints(args.decimal_column), partition_by=partition_by,
        sort_by=sort_by, maintenance=maintenance)


def _file_then_pairs(path: str | None, flag: str, env: str, pairs: list[str],
                     pairs_flag: str) -> dict[str, str]:
    """The settings file (`flag`, else the file named by $`env`), then KEY=VALUE pairs over it."""
    conf: dict[str, str] = {}
    if path:
        conf = read_settings_file(path, flag)
    elif os.environ.get(env):
        conf = read_settings_file(os.environ[env], env)
    conf.update(_pairs(pairs, pairs_flag))
    return conf


def _kafka_conf(args: argparse.Namespace) -> dict[str, str]:
    return _file_then_pairs(args.kafka_config, "--kafka-config", KAFKA_CONFIG_ENV,
                            args.kafka_conf, "--kafka-conf")


def _catalog_conf(args: argparse.Namespace) -> dict[str, str]:
    return _file_then_pairs(args.catalog_config, "--catalog-config", CATALOG_CONFIG_ENV,
                            args.catalog_conf, "--catalog-conf")
