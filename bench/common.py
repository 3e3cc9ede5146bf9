"""Shared bench plumbing: private services, the connector engine in-process, raw limits.

The benches start their own primary + read-only replica of one flavour (MariaDB, or MySQL 9
from the root `make setup` builds) and a broker under one temporary directory (as the test
fixtures do), run the real `Engine` in a thread of this process and stop everything by PID
at the end. `--flavour mariadb|mysql|both` (or BENCH_FLAVOUR; default both) picks the
flavours, run one after the other, each on services of its own.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Producer
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import (
    GtidEvent,
    HeartbeatLogEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    XAPrepareEvent,
    XidEvent,
)
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)

from bench.cpu import CpuSplit
from bench.debezium import start_replica
from bench.debezium_connect import start_worker
from connector.binlog import mysql_wire
from connector.binlog.framing import GTID, ROWS, XID, Framing, frames
from connector.binlog.rowimages import fast_rows
from connector.engine import Engine
from connector.flavours import Flavour, flavour_named
from connector.gcpolicy import tune_for_streaming
from connector.gtid import Gtid, Position
from connector.kafka.sink import PRODUCER_DEFAULTS
from connector.kafka.topics import TopicAdmin
from connector.kafka.transactions import TransactionalSink
from connector.logs import configure_logging
from connector.offsets.store import OffsetStore
from connector.offsets.value import ConnectorOffsets
from connector.settings.model import ConnectorConfig
from connector.settings.parse import parse_config
from tests.connect_services import ConnectWorker
from tests.connector_tools import SourcePair, connector_document
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, create_topic
from tests.mysql_services import MySqlPair
from tests.services import MariaDbPair

mysql_wire.install()  # as the reader does: MySQL GTID sets in the dump request, encoded by us

# The events the connector's reader asks for: decoding alone gets the same work.
READER_EVENTS = [MariadbGtidEvent, GtidEvent, QueryEvent, XidEvent, TableMapEvent,
                 WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent, RotateEvent,
                 HeartbeatLogEvent, XAPrepareEvent]
FLAVOURS = ("mariadb", "mysql")
SERVER = {"mariadb": "MariaDB", "mysql": "MySQL"}


def flavours_wanted(description: str | None, argv: list[str] | None = None) -> list[str]:
    """The flavours a bench runs: `--flavour mariadb|mysql|both`, else BENCH_FLAVOUR, else
    both (MariaDB first)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--flavour", choices=[*FLAVOURS, "both"],
                        default=os.environ.get("BENCH_FLAVOUR", "both"),
                        help="server flavour to run on (default: BENCH_FLAVOUR or both)")
    chosen = parser.parse_args(argv).flavour
    return list(FLAVOURS) if chosen == "both" else [chosen]


@dataclass
class Services:
    pair: SourcePair  # the primary and gtidmark's read-only replica
    broker: Broker
    base: Path
    # Debezium's: on MariaDB the same primary with a writable replica reporting MySQL
    # 5.7.19 (bench/debezium.py); on MySQL the same pair, read-only, as gtidmark reads it.
    debezium: SourcePair
    flavour: Flavour
    version: str  # the replica's SELECT VERSION()
    # A Kafka Connect worker on `broker` for Debezium on Connect (services(connect=True)).
    worker: ConnectWorker | None = None

    @property
    def server(self) -> str:
        return SERVER[self.flavour.name]

    def title(self, text: str) -> str:
        """A table title: MariaDB's as it always was, other flavours' marked with theirs."""
        return text if self.flavour.name == "mariadb" else f"{text} [{self.banner()}]"

    def label(self, name: str) -> str:
        """A row's first cell: MariaDB's as it always was, other flavours' marked."""
        return name if self.flavour.name == "mariadb" else f"{name} ({self.flavour.name})"

    def banner(self) -> str:
        return f"{self.server} {self.version}"


@contextmanager
def services(flavour: str = "mariadb", connect: bool = False) -> Iterator[Services]:
    """A primary, gtidmark's and Debezium's replicas and a broker (and with `connect` a
    Kafka Connect worker on it), stopped after."""
    base = Path(tempfile.mkdtemp(prefix="gmb"))  # short: a unix socket path is < ~100 bytes
    pair: SourcePair = MariaDbPair.create(base) if flavour == "mariadb" else MySqlPair.create(base)
    broker = Broker(base)
    dbz: SourcePair | None = None
    worker: ConnectWorker | None = None
    try:
        pair.start()
        if isinstance(pair, MariaDbPair):
            dbz = start_replica(pair)
        else:
            dbz = pair
        broker.start()
        version = str(pair.replica.execute("SELECT VERSION()")[0][0])
        print(f"\n=== {SERVER[flavour]} {version}: primary + read-only replica ===", flush=True)
        if connect:
            worker = start_worker(base, broker.bootstrap)
        yield Services(pair, broker, base, dbz, flavour_named(flavour), version, worker)
    finally:
        if worker is not None:
            worker.stop()
        broker.resume() if broker.proc is not None else None
        broker.stop()
        if dbz is not None and dbz is not pair:
            dbz.replica.stop()
        pair.stop()
        shutil.rmtree(base, ignore_errors=True)


def synced(svc: Services) -> None:
    """Both replicas have applied everything the primary has binlogged."""
    svc.pair.wait_synced()
    if svc.debezium is not svc.pair:
        svc.debezium.wait_synced()


def connector_config(svc: Services, prefix: str, **settings: Any) -> ConnectorConfig:
    return parse_config(connector_document(svc.pair, svc.broker, prefix, **settings))


def seed_offsets(config: ConnectorConfig, gtids: str) -> None:
    """Committed offsets that make the connector stream from `gtids` on its first start."""
    store = OffsetStore(config)
    store.open(TopicAdmin(config.producer_settings()))
    store.seed(ConnectorOffsets(gtids=gtids))
    assert store.flush(30)


class EngineThread:
    """The connector's `Engine` running in a thread of this process (no signal handlers)."""

    def __init__(self, config: ConnectorConfig) -> None:
        tune_for_streaming()  # as `gtidmark run` does for its process
        self.engine = Engine(config)
        self.exit_code: int | None = None
        self._thread = threading.Thread(target=self._run, name="engine", daemon=True)

    def _run(self) -> None:
        self.exit_code = self.engine.run()

    def start(self) -> None:
        self._thread.start()

    def acked_all(self) -> bool:
        """Every record sent is acknowledged (exactly once: in a committed transaction)."""
        sink = self.engine.sink
        if isinstance(sink, TransactionalSink):
            return sink.in_transaction == 0
        return sink.all_acked(sink.produced)

    def wait(self, predicate: Callable[[], bool], timeout: float, what: str,
             interval: float = 0.01) -> float:
        """Poll `predicate` until true; returns the monotonic time it was first seen true."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return time.monotonic()
            if not self._thread.is_alive():
                raise RuntimeError(f"engine exited ({self.exit_code}) while waiting for {what}")
            time.sleep(interval)
        raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")

    def stop(self) -> int | None:
        self.engine.stopping.set()
        self._thread.join(120)
        return self.exit_code


def decode_only(settings: dict[str, Any], server_id: int, flavour: Flavour, start: str,
                end: Position, framing: Framing = frames) -> tuple[int, float]:
    """The reader's decoding alone: rows decoded from `start` through `end`, and seconds.

    `frames` (connector/binlog/framing.py): the reader's own framing and compiled row
    decoders, the library's classes for the rest, as the reader runs it; nothing is built,
    sent, encoded or produced. `library_frames`: mysql-replication's framing with the
    table-map cache and compiled decoders (the reader before framing.py).

    The stream starts as the reader's does, from the flavour's `stream_start` (MariaDB: the
    GTID position's text; MySQL: the GTID set, encoded by connector/binlog/mysql_wire.py).
    blocking=True with our own stop at `end`'s last commit: a non-blocking dump from this
    MariaDB 10.11 resets the connection part-way through a large binlog (measured: after
    ~140k of 200k rows, every time), so it cannot be used to read "to the end".
    """
    began = time.monotonic()
    position = flavour.position(start)
    stream = BinLogStreamReader(connection_settings=dict(settings), server_id=server_id,
                                is_mariadb=flavour.is_mariadb,
                                auto_position=flavour.stream_start(position), blocking=True,
                                only_events=READER_EVENTS)
    rows = 0
    current: Gtid | None = None
    try:
        for frame in framing(stream, _table_id):
            kind = frame[0]
            if kind == ROWS:
                decoded = frame[3]
                if decoded is None:
                    decoded = fast_rows(frame[5])
                rows += len(decoded if decoded is not None else frame[5].rows)
            elif kind == GTID:
                current = frame[4]
            elif kind == XID and current is not None:
                position = position.advance(current)
                if position.covers(end):
                    break
    finally:
        stream.close()
    return rows, time.monotonic() - began


def _table_id(event: Any) -> Any:
    """Stands for the reader's TableSchema: decoding alone needs none."""
    return event.table_id


def gtid_pos(svc: Services) -> str:
    """gtidmark's replica's binlog position once both replicas have the primary's writes
    (the flavour's `current_position`: MariaDB's gtid_binlog_pos, MySQL's gtid_executed)."""
    synced(svc)
    conn = svc.pair.replica.root()
    try:
        with conn.cursor() as cur:
            return str(svc.flavour.current_position(cur))
    finally:
        conn.close()


def produce_only(config: ConnectorConfig, topic: str, broker_pid: int) -> dict[str, Any]:
    """confluent-kafka alone producing the records of `topic` again: the same keys and values
    (tombstones too), the connector's producer settings and one delivery callback, into a
    topic of its own. The first record is sent and acknowledged untimed (connection and
    metadata, as the connector has them before its stream starts); the rest is timed from
    the first produce call to the last acknowledgement, with the CPU seconds it took here
    and in the broker."""
    items = [(m.key(), m.value()) for m in consume_all(config.bootstrap_servers, topic, 60)]
    target = f"{topic}.raw"
    create_topic(config.bootstrap_servers, target)
    producer = Producer({**PRODUCER_DEFAULTS, **config.producer_settings()})
    failed: list[Any] = []

    def delivered(err: Any, _msg: Any) -> None:
        if err is not None:
            failed.append(err)

    produce = producer.produce
    produce(target, items[0][1], items[0][0], on_delivery=delivered)
    producer.flush(30)
    items = items[1:]
    split = CpuSplit({"broker": broker_pid})
    began = time.monotonic()
    for key, value in items:
        while True:
            try:
                produce(target, value, key, on_delivery=delivered)
                break
            except BufferError:  # the 32 MiB queue is full: serve callbacks, then retry
                producer.poll(0.005)
        producer.poll(0)
    left = producer.flush(300)
    seconds = time.monotonic() - began
    cpu = sum(split.stop().values())
    if left or failed:
        raise RuntimeError(f"bare producer: {left} records unacknowledged, errors {failed[:3]}")
    size = sum(len(k or b"") + len(v or b"") for k, v in items)
    return {"records": len(items), "bytes": size, "seconds": seconds, "cpu": cpu}


def debezium_peers() -> tuple[bool, bool]:
    """Which Debezium peers run, (embedded, on Connect): BENCH_DEBEZIUM 1 (default) both,
    0 neither, `embedded` or `connect` the one."""
    chosen = os.environ.get("BENCH_DEBEZIUM", "1")
    return chosen in ("1", "embedded"), chosen in ("1", "connect")


def scaled(size: int) -> int:
    """`size` times BENCH_SCALE (default 1): smaller runs while developing a bench."""
    return max(1, int(size * float(os.environ.get("BENCH_SCALE", "1"))))


def quiet_logs() -> None:
    configure_logging(logging.WARNING)


def print_table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    cells = [header] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}")
    for n, row in enumerate(cells):
        print("  " + "  ".join(c.rjust(w) if i else c.ljust(w)
                               for i, (c, w) in enumerate(zip(row, widths, strict=True))))
        if n == 0:
            print("  " + "  ".join("-" * w for w in widths))
    sys.stdout.flush()


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
