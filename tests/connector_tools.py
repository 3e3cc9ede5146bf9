"""Running the real connector in tests, and rebuilding tables from its topics."""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.mysql_services import MySqlPair
from tests.services import CDC_PASSWORD, CDC_USER, MariaDbPair, wait_for

SourcePair = MariaDbPair | MySqlPair  # what a test streams from: either flavour's pair
CONNECTOR_CLASS = {"mariadb": "io.debezium.connector.mariadb.MariaDbConnector",
                   "mysql": "io.debezium.connector.mysql.MySqlConnector"}

ROOT = Path(__file__).resolve().parent.parent


# Every test's lease unless it sets `ha.session.timeout.ms` itself: a SIGKILLed instance keeps
# the lease until its session expires, so tests take the shortest session Apache Kafka
# allows (its group.min.session.timeout.ms, 6 s). Delivery keeps the product default's bound
# (half of 10 s), so records time out as in a default deployment. test_ha sets its own
# session; PRODUCT_LEASE is the product's default one.
QUICK_LEASE = {"ha.session.timeout.ms": "6000", "producer.message.timeout.ms": "5000"}
PRODUCT_LEASE = {"ha__session__timeout__ms": "10000"}


def connector_document(mariadb: SourcePair, broker: Broker, prefix: str,
                       **settings: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "connector.class": CONNECTOR_CLASS[mariadb.flavour],
        "database.hostname": "127.0.0.1",
        "database.port": str(mariadb.replica.port),
        "database.user": CDC_USER,
        "database.password": CDC_PASSWORD,
        "database.server.id": str(5000 + abs(hash(prefix)) % 10000),
        "topic.prefix": prefix,
        "database.include.list": prefix,
        "bootstrap.servers": broker.bootstrap,
        "snapshot.mode": "no_data",
    }
    config.update({k.replace("__", "."): v for k, v in settings.items()})
    if "ha.session.timeout.ms" not in config and config.get("ha.enabled") != "false":
        config = {**QUICK_LEASE, **config}
    return {"name": f"{prefix}-connector", "config": config}


class ConnectorProcess:
    """`gtidmark run` as a child process, its log in a file the test can wait on."""

    def __init__(self, document: dict[str, Any], workdir: Path) -> None:
        self.workdir = workdir
        self.config_path = workdir / "connector.json"
        self.config_path.write_text(json.dumps(document, indent=2))
        self.log_path = workdir / "connector.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.log_offset = 0
        self.cli_options: list[str] = []  # before the subcommand, e.g. --log-level DEBUG
        self.run_options: list[str] = []  # after `run --config FILE`, e.g. --worker FILE

    def start(self) -> None:
        self.starts += 1
        self.log_offset = len(self.log())
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with open(self.log_path, "ab") as out:
            out.write(f"--- start {self.starts} ---\n".encode())
            out.flush()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "connector.cli", *self.cli_options, "run", "--config",
                 str(self.config_path), *self.run_options], stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_log(self, text: str, timeout: float = 60, after: int | None = None) -> None:
        """Wait for `text` in the log written since the last start (or after `after`)."""
        after = self.log_offset if after is None else after
        def seen() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"connector exited {self.proc.returncode}: "
                                     f"{self.log()[-2000:]}")
            return text in self.log()[after:]
        wait_for(seen, timeout, f"connector log line {text!r}")

    def stop(self, timeout: float = 60) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def ensure_stopped(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@contextmanager
def streaming_connector(document: dict[str, Any], workdir: Path,
                        timeout: float = 60) -> Iterator[ConnectorProcess]:
    """`gtidmark run` once its binlog stream is open; killed on the way out if it still runs."""
    proc = ConnectorProcess(document, workdir)
    proc.start()
    try:
        proc.wait_log("binlog stream open", timeout=timeout)
        yield proc
    finally:
        proc.ensure_stopped()


def decode_field(schema: dict[str, Any], value: Any) -> Any:
    """Kafka Connect JSON value -> comparable Python value, from the field's schema."""
    if value is None:
        return None
    name = schema.get("name")
    if name == "org.apache.kafka.connect.data.Decimal":
        unscaled = int.from_bytes(base64.b64decode(value), "big", signed=True)
        return decimal.Decimal(unscaled).scaleb(-int(schema["parameters"]["scale"]))
    if name == "io.debezium.time.Date":
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=value)
    if name == "io.debezium.time.Timestamp":
        return datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=value)
    if name == "io.debezium.time.MicroTimestamp":
        return datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=value)
    if schema.get("type") == "bytes":
        return base64.b64decode(value)
    return value


def decode_row(schema: dict[str, Any] | None, payload: dict[str, Any]) -> dict[str, Any]:
    if schema is None:
        return dict(payload)
    fields = {f["field"]: f for f in schema["fields"]}
    return {k: decode_field(fields[k], v) for k, v in payload.items()}


def rebuild(bootstrap: str, topic: str) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Apply a change topic in order: c/u/r upsert `after`, d deletes; tombstones skipped.

    Returns the table by JSON key and the list of envelopes (payloads) seen.
    """
    table: dict[str, dict[str, Any]] = {}
    envelopes: list[dict[str, Any]] = []
    for msg in consume_all(bootstrap, topic):
        if msg.value() is None:
            continue
        doc = json.loads(msg.value())
        payload = doc["payload"] if "payload" in doc and "schema" in doc else doc
        schema = doc.get("schema")
        envelopes.append(payload)
        key_doc = json.loads(msg.key())
        key = json.dumps(key_doc.get("payload", key_doc), sort_keys=True)
        op = payload["op"]
        if op == "d":
            table.pop(key, None)
        else:
            after_schema = None
            if schema is not None:
                after_schema = next(f for f in schema["fields"] if f["field"] == "after")
            table[key] = decode_row(after_schema, payload["after"])
    return table, envelopes


def source_rows(mariadb: SourcePair, db: str, table: str,
                key: list[str]) -> dict[str, dict[str, Any]]:
    """The primary's rows keyed like `rebuild` keys them."""
    conn = mariadb.primary.root(db)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT * FROM `{table}`")
            names = [d[0] for d in cur.description]
            out = {}
            for row in cur.fetchall():
                values = dict(zip(names, row))
                out[json.dumps({k: values[k] for k in key}, sort_keys=True)] = values
            return out
    finally:
        conn.close()


def wait_until(predicate: Any, timeout: float, what: str) -> Any:
    return wait_for(predicate, timeout, what, interval=0.5)


def now() -> float:
    return time.monotonic()


# Another member of a connector's lease group, holding the lease until killed (argv:
# bootstrap, group, topic, session ms).
_LEASE_HOLDER = """
import sys
from confluent_kafka import Consumer
bootstrap, group, topic, session = sys.argv[1:5]
member = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                   "session.timeout.ms": int(session),
                   "heartbeat.interval.ms": int(session) // 6,
                   "partition.assignment.strategy": "cooperative-sticky"})
member.subscribe([topic])
told = False
while True:
    msg = member.poll(0.1)
    if msg is not None and msg.error() is not None and not told:  # e.g. a refused join
        print(f"error {msg.error().str()}", flush=True)
        sys.exit(1)
    if member.assignment() and not told:
        print("holding", flush=True)
        told = True
"""


@contextmanager
def lease_holder(bootstrap: str, connector_name: str, signal_topic: str,
                 session_ms: int = 6000) -> Iterator[subprocess.Popen[str]]:
    """A process that holds `connector_name`'s lease (it joined the group first) until the
    test kills it, as a leader on another host would."""
    holder = subprocess.Popen([sys.executable, "-c", _LEASE_HOLDER, bootstrap,
                               f"{connector_name}-leader", signal_topic, str(session_ms)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        said = holder.stdout.readline()  # "error ..." and an exit when the join is refused
        assert said == "holding\n", f"the lease holder did not join: {said!r}"
        yield holder
    finally:
        holder.kill()
        holder.wait(30)
