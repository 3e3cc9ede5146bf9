"""The `gtidmark` command: run | signal | status | spark-apply.

Exit codes: 0 ok; 2 bad configuration or arguments (one line naming the key and why);
1 runtime failure after retries are exhausted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from confluent_kafka import KafkaException

from connector import __version__
from connector.kafka.reach import KafkaUnreachable
from connector.logs import configure_logging
from connector.settings.errors import ConfigError, ConfigProblems
from connector.settings.model import MAX_CHUNK_DELAY_MS, MAX_CHUNK_SIZE, ConnectorConfig
from connector.settings.parse import load_config
from connector.start_checks import ServicesUnreachable

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2

DESCRIPTION = """\
gtidmark streams a MySQL/MariaDB read replica's binlog to Kafka as Debezium change events,
takes read-only incremental snapshots on demand (DBLog watermarks) and applies the change
topics to Iceberg tables with Spark. The connector file is Kafka Connect's JSON shape:
{"name": "...", "config": {"database.hostname": ..., "topic.prefix": ..., ...}}.
"""


WORKER_HELP = ("a Kafka Connect worker's properties file (connect-distributed.properties): "
               "bootstrap.servers, offset.storage.*, converters, producer.*/consumer.* and "
               "the clients' security settings are read from it where the connector file "
               "does not set them")


class UsageError(Exception):
    """Bad arguments; the message is printed as one line and the exit code is 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


class _Subcommands:
    """Subparsers whose every parser also takes the common options (--log-level)."""

    def __init__(self, action: Any) -> None:
        self._action = action
        self.required = True
        action.required = True

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        kwargs.setdefault("parents", [_common_options()])
        parser: argparse.ArgumentParser = self._action.add_parser(name, **kwargs)
        return parser


LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR"]


def _common_options() -> argparse.ArgumentParser:
    """--log-level again on every subcommand: `gtidmark run --log-level debug ...` works too."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--log-level", type=str.upper, choices=LOG_LEVELS,
                        default=argparse.SUPPRESS, help="logging threshold (default INFO)")
    return common


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gtidmark", description=DESCRIPTION,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log-level", default="INFO", type=str.upper, choices=LOG_LEVELS,
                        help="logging threshold (default INFO)")
    parser.add_argument("--version", action="version", version=f"gtidmark {__version__}")
    sub = _Subcommands(parser.add_subparsers(dest="command", metavar="COMMAND",
                                             parser_class=_Parser))

    run = sub.add_parser("run", help="run the connector in the foreground",
                         description="Stream the replica's binlog to Kafka until SIGTERM/SIGINT, "
                         "then flush, commit offsets and exit 0 (1 if the task is FAILED "
                         "behind rest.port; PUT .../stop first makes it 0).")
    run.add_argument("--config", required=True, help="connector JSON file (Kafka Connect shape)")
    run.add_argument("--worker", help=WORKER_HELP)

    sig = sub.add_parser("signal", help="send a signal to a running connector",
                         description="Produce a Debezium signal message to the connector's "
                         "signal topic (key = topic.prefix).")
    sig.add_argument("--config", required=True, help="connector JSON file")
    sig.add_argument("--worker", help=WORKER_HELP)
    actions = _Subcommands(sig.add_subparsers(dest="action", metavar="ACTION",
                                              parser_class=_Parser))
    snap = actions.add_parser("execute-snapshot", help="start an incremental snapshot")
    snap.add_argument("--tables", required=True,
                      help="comma-separated db.table names or regexes, e.g. app.orders,app.items")
    snap.add_argument("--condition", action="append", default=[], metavar="TABLE=FILTER",
                      help='extra WHERE fragment for one table, e.g. "app.orders=id < 1000"; '
                      "repeatable")
    snap.add_argument("--surrogate-key", help="column to order chunks by (then the primary key, if any); "
                      "needed for a table without one")
    for name, text in (("stop-snapshot", "cancel a running snapshot (all or --tables)"),
                       ("pause-snapshot", "pause the running snapshot"),
                       ("resume-snapshot", "resume a paused snapshot")):
        action = actions.add_parser(name, help=text)
        if name == "stop-snapshot":
            action.add_argument("--tables", help="comma-separated tables to stop (default all)")
    throttle = actions.add_parser(
        "set-throttle", help="change chunk size and delay while running",
        description="Change the snapshot chunk size and/or the pause between chunks while "
        "the connector runs (give one or both); kept in the offsets across restarts.")
    throttle.add_argument("--chunk-size", type=int, metavar="ROWS",
                          help=f"rows per chunk SELECT, 1 to {MAX_CHUNK_SIZE:,} (default: "
                          "unchanged; a connector starts with incremental.snapshot.chunk.size, "
                          "1024 unless set)")
    throttle.add_argument("--chunk-delay-ms", type=int, metavar="MS",
                          help=f"pause between chunks in milliseconds, 0 to "
                          f"{MAX_CHUNK_DELAY_MS:,} (default: unchanged; a connector starts "
                          "with incremental.snapshot.chunk.delay.ms, 0 unless set)")
    log_action = actions.add_parser("log", help="ask the connector to log a message")
    log_action.add_argument("message")

    status = sub.add_parser("status", help="show state, liveness, lag, snapshot progress",
                            description="Read the connector's state (status topic), its live "
                            "instances (lease group) and committed offsets from Kafka, and "
                            "print them with the lag behind the replica in seconds and "
                            "transactions and the snapshot progress per table.")
    status.add_argument("--config", required=True, help="connector JSON file")
    status.add_argument("--worker", help=WORKER_HELP)
    status.add_argument("--json", action="store_true", help="machine-readable output")

    spark = sub.add_parser("spark-apply", help="apply change topics to Iceberg tables (PySpark)",
                           description="Run the Spark job of spark_consumer; see "
                           "`gtidmark spark-apply --help`.", add_help=False, parents=[])
    spark.add_argument("spark_args", nargs=argparse.REMAINDER)
    return parser


def _config(path: str, worker: str | None) -> ConnectorConfig:
    return load_config(path, worker)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["spark-apply"]:
        # Everything after the word belongs to the Spark job's own parser (and --help).
        from spark_consumer.job.main import main as spark_main

        return int(spark_main(args_list[1:]))
    try:
        args = build_parser().parse_args(args_list)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    configure_logging(args.log_level)
    try:
        return _dispatch(args)
    except ConfigProblems as exc:
        for line in exc.lines:
            print(f"error: {line}", file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KafkaUnreachable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_RUNTIME
    except ServicesUnreachable as exc:
        for line in exc.lines:
            print(f"error: {line}", file=sys.stderr)
        return EXIT_RUNTIME
    except (KafkaException, TimeoutError) as exc:  # the broker went away after the first answer
        print(f"error: {args.command}: Kafka: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        return EXIT_OK


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "spark-apply":
        try:
            from spark_consumer.job.main import main as spark_main
        except ImportError as exc:
            raise UsageError(f"spark-apply is not available: {exc}") from None
        given = any(a.startswith("--log-level") for a in args.spark_args)
        return int(spark_main(args.spark_args if given else
                              ["--log-level", args.log_level, *args.spark_args]))
    config = _config(args.config, args.worker)
    if args.command == "run":
        from connector.run import run_connector

        return run_connector(config)
    if args.command == "signal":
        from signals.send import send_from_args

        return send_from_args(config, args)
    if args.command == "status":
        from connector.status import print_status

        return print_status(config, as_json=args.json)
    raise UsageError(f"unknown command {args.command}")


if __name__ == "__main__":
    sys.exit(main())
