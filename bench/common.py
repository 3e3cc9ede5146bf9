"""Shared bench plumbing: private services, the connector engine in-process, raw decoding.

The benches start their own MariaDB primary + replica and broker under one temporary
directory (as the test fixtures do), run the real `Engine` in a thread of this process and
stop everything by PID at the end.
"""

from __future__ import annotations

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

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import (
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

from bench.debezium import start_replica
from connector.binlog.framing import GTID, ROWS, XID, Framing, frames
from connector.binlog.rowimages import fast_rows
from connector.config import ConnectorConfig, parse_config
from connector.engine import Engine
from connector.gcpolicy import tune_for_streaming
from connector.gtid import MariaDbGtidPos, MariaGtid
from connector.kafka import TopicAdmin
from connector.logs import configure_logging
from connector.offsets import OffsetStore
from connector.offsets_value import ConnectorOffsets
from tests.connector_tools import connector_document
from tests.services import Broker, MariaDbPair

# The events the connector's reader asks for: decoding alone gets the same work.
READER_EVENTS = [MariadbGtidEvent, QueryEvent, XidEvent, TableMapEvent, WriteRowsEvent,
                 UpdateRowsEvent, DeleteRowsEvent, RotateEvent, HeartbeatLogEvent,
                 XAPrepareEvent]


@dataclass
class Services:
    mariadb: MariaDbPair
    broker: Broker
    base: Path
    debezium: MariaDbPair  # the same primary, with the replica Debezium reads (5.7.19)


@contextmanager
def services() -> Iterator[Services]:
    """A MariaDB primary, gtidmark's and Debezium's replicas and a broker, stopped after."""
    base = Path(tempfile.mkdtemp(prefix="gmb"))  # short: a unix socket path is < ~100 bytes
    pair = MariaDbPair.create(base)
    broker = Broker(base)
    dbz: MariaDbPair | None = None
    try:
        pair.start()
        dbz = start_replica(pair)
        broker.start()
        yield Services(pair, broker, base, dbz)
    finally:
        broker.resume() if broker.proc is not None else None
        broker.stop()
        if dbz is not None:
            dbz.replica.stop()
        pair.stop()
        shutil.rmtree(base, ignore_errors=True)


def synced(svc: Services) -> None:
    """Both replicas have applied everything the primary has binlogged."""
    svc.mariadb.wait_synced()
    svc.debezium.wait_synced()


def connector_config(svc: Services, prefix: str, **settings: Any) -> ConnectorConfig:
    return parse_config(connector_document(svc.mariadb, svc.broker, prefix, **settings))


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
        sink = self.engine.sink
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


def decode_only(settings: dict[str, Any], server_id: int, start: str, end: MariaDbGtidPos,
                framing: Framing = frames) -> tuple[int, float]:
    """The reader's decoding alone: rows decoded from `start` through `end`, and seconds.

    `frames` (connector/binlog/framing.py): the reader's own framing and generated row
    decoders, the library's classes for the rest, as the reader runs it; nothing is built,
    sent, encoded or produced. `library_frames`: mysql-replication's framing with the
    table-map cache and generated decoders (the reader before framing.py).

    blocking=True with our own stop at `end`'s last commit: a non-blocking dump from this
    MariaDB 10.11 resets the connection part-way through a large binlog (measured: after
    ~140k of 200k rows, every time), so it cannot be used to read "to the end".
    """
    began = time.monotonic()
    stream = BinLogStreamReader(connection_settings=dict(settings), server_id=server_id,
                                is_mariadb=True, auto_position=start, blocking=True,
                                only_events=READER_EVENTS)
    rows = 0
    position = MariaDbGtidPos.parse(start)
    current: MariaGtid | None = None
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
    """gtidmark's replica's binlog position once both replicas have the primary's writes."""
    synced(svc)
    return str(svc.mariadb.replica.execute("SELECT @@global.gtid_binlog_pos")[0][0])


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
