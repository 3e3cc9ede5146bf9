"""`make demo [FLAVOUR=mysql]`: the whole pipeline on one machine, end to end, in minutes.

A private MariaDB (or, with `--flavour mysql`, MySQL) primary + read-only replica and a local
broker, sample tables, the connector, an incremental snapshot signalled while a writer keeps
changing rows, the Spark job `--once`, then the source tables next to their Iceberg tables
and a verdict. Everything it started is stopped, also on Ctrl-C or failure. Exit 0 when
every table is equal, else 1.

The databases, sample tables and writer are in `connector/demo_sources.py` (the test
harness's servers, so the demo runs from a source checkout: `make demo` in the repository
root); the verdict in `connector/demo_report.py`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

from connector.demo_report import DB, TABLES, compare_all
from connector.demo_sources import (
    CUSTOMERS,
    FLAVOURS,
    LABELS,
    ORDERS,
    Writer,
    connector_document,
    create_sample_tables,
    new_broker,
    new_pair,
)
from connector.flavours import Flavour, flavour_named
from connector.gtid import Position
from connector.offsets.store import read_committed
from connector.settings.model import ConnectorConfig
from connector.settings.parse import parse_config

PREFIX = "demo"
_START = time.monotonic()
_CHILD = "GTIDMARK_DEMO_CHILD"  # set in the supervised child that does the work
_interrupted = threading.Event()


def say(message: str) -> None:
    """One progress line with the elapsed time, so a newcomer sees where the demo is."""
    print(f"[demo {time.monotonic() - _START:6.1f}s] {message}", flush=True)


class Connector:
    """`gtidmark run` as a child process in its own session; interesting log lines echoed."""

    ECHO = ("streaming from", "snapshot", "ERROR", "WARNING")

    def __init__(self, document: dict[str, Any], workdir: Path, flavour: Flavour) -> None:
        self.config_path = workdir / "connector.json"
        self.config_path.write_text(json.dumps(document, indent=2))
        self.config: ConnectorConfig = parse_config(document)
        self.flavour = flavour  # reads and compares the servers' GTID positions
        self.log_path = workdir / "connector.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._seen = 0

    def start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "connector.cli", "run", "--config", str(self.config_path)],
                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)

    def wait_log(self, text: str, timeout: float) -> None:
        """Block until `text` is logged, echoing new interesting lines meanwhile."""
        deadline = time.monotonic() + timeout
        while True:
            log = self.log_path.read_text(errors="replace")
            fresh, self._seen = log[self._seen:], len(log)
            for line in fresh.splitlines():
                if any(word in line for word in self.ECHO):
                    print(f"      connector | {line.split(': ', 1)[-1]}", flush=True)
            if text in log:
                return
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"the connector exited with {self.proc.returncode}; "
                                   f"see {self.log_path}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {text!r} in the connector log after {timeout:.0f}s; "
                                   f"see {self.log_path}")
            time.sleep(0.3)

    def committed_gtids(self) -> Position | None:
        """The GTID position of the last committed offsets record, if any."""
        committed = read_committed(self.config)
        return None if committed is None else self.flavour.position(committed.gtids)

    def wait_caught_up(self, target: Position, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while True:
            committed = self.committed_gtids()
            if committed is not None and committed.covers(target):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"committed offsets {committed} do not cover {target} after "
                                   f"{timeout:.0f}s; see {self.log_path}")
            time.sleep(0.5)

    def stop(self) -> None:
        """SIGTERM (flush, commit offsets, exit 0); SIGKILL if it does not stop in time."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def spark_apply(bootstrap: str, warehouse: Path, workdir: Path) -> Any:
    """Run `gtidmark spark-apply --once` in this process; its SparkSession is returned."""
    from spark_consumer.job.main import main as spark_main
    from spark_consumer.job.options import parse_options
    from spark_consumer.job.session import build_session

    argv = ["--bootstrap-servers", bootstrap, "--topics",
            ",".join(f"{PREFIX}.{DB}.{t}" for t in TABLES), "--warehouse", str(warehouse),
            "--once", "--dead-letter", str(workdir / "dead-letter.jsonl")]
    say("   $ gtidmark spark-apply " + " ".join(argv))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers need this venv
    spark = build_session(parse_options(argv))  # the job reuses it (getOrCreate)
    signal.signal(signal.SIGINT, _interrupt)  # PySpark replaced ours when it started
    try:
        code = spark_main(argv)
    finally:
        signal.signal(signal.SIGTERM, _interrupt)  # the job's own handler is gone with it
    if _interrupted.is_set():
        raise KeyboardInterrupt
    if code != 0:
        raise RuntimeError(f"spark-apply exited with {code}")
    return spark


def stop_spark() -> None:
    """Stop the job's SparkSession (and its JVM) if one was started."""
    if "pyspark" in sys.modules:
        from pyspark.sql import SparkSession

        session = SparkSession.getActiveSession()
        if session is not None:
            session.stop()


@contextlib.contextmanager
def stderr_to(path: Path) -> Iterator[None]:
    """Send file descriptor 2 (where librdkafka logs) to `path` for a while."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as sink:
        os.dup2(sink.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def run(base: Path, stoppers: list[Any], flavour_name: str) -> bool:
    """Steps 1-6; every service is registered in `stoppers` as soon as it starts."""
    from signals.send import build_signal, send_signal

    label, flavour = LABELS[flavour_name], flavour_named(flavour_name)
    say(f"1/6 starting a private {label} primary + read-only replica and a broker in {base}")
    pair = new_pair(flavour_name, base)
    stoppers.append(pair.stop)
    pair.start()
    broker = new_broker(base)
    stoppers.append(broker.stop)
    with stderr_to(base / "broker-start.log"):  # librdkafka: "connection refused" until up
        broker.start()
    say(f"    primary on port {pair.primary.port}, replica on {pair.replica.port}, "
        f"broker on {broker.bootstrap}")

    say(f"2/6 creating {DB}.customers ({CUSTOMERS} rows) and {DB}.orders ({ORDERS} rows)")
    create_sample_tables(pair)

    say("3/6 starting the connector on the replica (snapshot.mode=no_data) and a writer "
        "that keeps changing rows on the primary")
    document = connector_document(flavour_name, PREFIX, pair.cdc_settings(), broker.bootstrap)
    say(f"    connector.class {document['config']['connector.class']}")
    connector = Connector(document, base, flavour)
    stoppers.append(connector.stop)
    connector.start()
    connector.wait_log("streaming from", 60)
    writer = Writer(pair.primary)
    stoppers.append(writer.stop_flag.set)
    writer.start()
    time.sleep(2)

    tables = [f"{DB}.{t}" for t in TABLES]
    say(f"4/6 sending execute-snapshot for {', '.join(tables)} while the writer runs")
    say(f"   $ gtidmark signal --config {connector.config_path} execute-snapshot "
        f"--tables {','.join(tables)}")
    send_signal(connector.config, build_signal("execute-snapshot", tables=tables))
    for table in tables:
        connector.wait_log(f"snapshot of {table} complete", 240)
    writes = writer.stop()
    say(f"    snapshot complete; the writer made {writes} changes meanwhile and is stopped")
    target = flavour.position(pair.wait_synced())
    connector.wait_caught_up(target)
    say(f"    the connector's committed offsets cover the primary's position {target}")

    say("5/6 applying the change topics to Iceberg tables with Spark (--once)")
    spark = spark_apply(broker.bootstrap, base / "warehouse", base)

    say("6/6 comparing every row of the source tables with the Iceberg tables")
    return compare_all(pair.primary, spark, f"{label} primary")


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C (forwarded by `supervise`) or SIGTERM: remember it, unwind to the cleanup."""
    _interrupted.set()
    raise KeyboardInterrupt


def workdir() -> Path:
    """A fresh directory; short, because MariaDB's socket path must stay under ~100 bytes."""
    parent = tempfile.gettempdir()
    return Path(tempfile.mkdtemp(prefix="gtidmark-demo-",
                                 dir=parent if len(parent) < 40 else "/tmp"))


def cleanup(base: Path, keep_logs: bool) -> None:
    """Remove the work directory; after a failure keep only its logs for reading."""
    if not keep_logs:
        shutil.rmtree(base, ignore_errors=True)
        return
    for big in [*base.glob("*/data"), base / "warehouse"]:  # the servers' datadirs, Iceberg
        shutil.rmtree(big, ignore_errors=True)
    say(f"logs kept in {base}")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m connector.demo", description="gtidmark end to end on one machine "
        "(`make demo`, `make demo FLAVOUR=mysql`)")
    parser.add_argument("--flavour", choices=FLAVOURS, default="mariadb",
                        help="the source database: MariaDB 10.11 (default) or MySQL 9 from "
                        "the root `make setup` builds")
    return parser.parse_args(argv)


def supervise(argv: list[str]) -> int:
    """Run the demo in its own session and forward Ctrl-C to it alone.

    A terminal's Ctrl-C reaches the whole process group: the broker and the databases would
    die first, in any order, and the connector could not flush. Here only the demo hears it
    and stops what it started in order.
    """
    env = {**os.environ, _CHILD: "1"}
    proc = subprocess.Popen([sys.executable, "-m", "connector.demo", *argv], env=env,
                            start_new_session=True)

    def forward(signum: int, frame: FrameType | None) -> None:
        proc.send_signal(signal.SIGINT)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, forward)
    code = proc.wait()
    return code if code >= 0 else 128 - code  # killed by a signal: the shell's convention


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)  # bad arguments: exit 2 here, before anything starts
    if os.environ.get(_CHILD) != "1":
        return supervise(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="      spark | %(message)s")
    logging.getLogger("spark_consumer").setLevel(logging.INFO)
    logging.getLogger("py4j").setLevel(logging.CRITICAL)  # tracebacks of an interrupted call
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _interrupt)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # everything here is on loopback
    base = workdir()
    stoppers: list[Any] = [stop_spark]
    equal = False
    try:
        equal = run(base, stoppers, args.flavour)
        return 0 if equal else 1
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    except Exception as exc:  # noqa: BLE001 - one line for the user, exit 1
        say(f"failed: {type(exc).__name__}: {exc}")
        return 1
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: say("still stopping, a few seconds more"))
        say("stopping everything the demo started")
        for stop in reversed(stoppers):
            try:
                stop()
            except Exception as exc:  # noqa: BLE001 - keep stopping the rest
                say(f"    while stopping: {exc}")
        cleanup(base, keep_logs=not equal)
        say(f"done in {time.monotonic() - _START:.0f}s")


if __name__ == "__main__":
    sys.exit(main())
