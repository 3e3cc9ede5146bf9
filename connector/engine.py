"""The connector's main loop: reader → dispatcher → encoder → sink, offsets after acks.

One thread applies transactions in binlog order; the reader (its own process) only
decodes. The snapshot coordinator runs its chunk SELECTs in this same thread, which is
what "pause binlog processing" means here: for the length of one SELECT, transactions
wait in the queue.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from typing import Any

import pymysql

from connector.binlog.process import ReaderProcess
from connector.binlog.queue import ChangeQueue
from connector.binlog.reader import Transaction
from connector.config import ConfigError, ConnectorConfig
from connector.dispatcher import Dispatcher
from connector.events.envelope import EventEncoder
from connector.events.types import SNAPSHOT_SESSION_INIT
from connector.filters import TableFilter
from connector.gtid import MariaDbGtidPos
from connector.kafka import TopicAdmin
from connector.offsets import OffsetStore
from connector.sink import DeliveryFailed, Sink
from connector.snapshot.coordinator import SnapshotCoordinator
from signals.channel import SignalChannel

log = logging.getLogger("gtidmark")

CHECKPOINT_INTERVAL = 0.2  # how often the state is noted; it is written once acked
PROGRESS_INTERVAL = 1.0
SIGNAL_INTERVAL = 0.2
FLUSH_TIMEOUT = 60.0


def replica_connection(config: ConnectorConfig) -> pymysql.connections.Connection:
    """A read-only session on the replica for watermarks and chunk SELECTs."""
    settings = config.mysql_settings()
    settings["password"] = settings.pop("passwd")
    conn = pymysql.connect(**settings, autocommit=True, connect_timeout=10, read_timeout=600,
                           init_command=SNAPSHOT_SESSION_INIT)
    with conn.cursor() as cur:
        cur.execute("SET SESSION TRANSACTION READ ONLY")
    return conn


class Engine:
    def __init__(self, config: ConnectorConfig) -> None:
        self.config = config
        self.stopping = threading.Event()
        self.admin = TopicAdmin(config.producer_settings(), partitions=config.topic_partitions)
        self.sink = Sink(config.producer_settings())
        self.offsets = OffsetStore(config, self.admin)
        self.encoder = EventEncoder(config)
        self.filter = TableFilter(config)
        self.queue: ChangeQueue[Transaction] = ChangeQueue()
        self.signals = SignalChannel(config)
        self.snapshots = SnapshotCoordinator(config, self.encoder, self.sink, self.filter,
                                             self.admin, lambda: replica_connection(config))
        self.dispatcher = Dispatcher(config, self.encoder, self.sink, self.filter, self.admin,
                                     self.snapshots)
        self.position = MariaDbGtidPos.parse("")
        self.file = ""
        self.pos = 0
        self.ts_sec = 0
        self.reader: ReaderProcess | None = None

    # -- state -------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The offsets value: where streaming is, snapshot progress, signal position."""
        return {
            "gtids": str(self.position),
            "file": self.file,
            "pos": self.pos,
            "event": 0,
            "row": 0,
            "server_id": self.dispatcher.last_server_id,
            "ts_sec": self.ts_sec,
            "snapshot": self.snapshots.state(),
            "signal_offset": self.signals.next_offset,
        }

    def _start_position(self, stored: dict[str, Any] | None) -> MariaDbGtidPos:
        if stored is not None:
            log.info("resuming from committed offsets: gtids=%s file=%s pos=%s",
                     stored.get("gtids"), stored.get("file"), stored.get("pos"))
            self.file, self.pos = str(stored.get("file", "")), int(stored.get("pos", 0))
            return MariaDbGtidPos.parse(str(stored.get("gtids", "")))
        if self.config.snapshot_mode == "never":
            log.info("first start, snapshot.mode=never: streaming from the oldest binlog")
            return MariaDbGtidPos.parse("")
        conn = replica_connection(self.config)
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT @@global.gtid_binlog_pos")
                row = cur.fetchone()
        finally:
            conn.close()
        position = MariaDbGtidPos.parse(str(row[0] if row else ""))
        log.info("first start, snapshot.mode=%s: streaming from the current position %s",
                 self.config.snapshot_mode, position)
        return position

    # -- run ---------------------------------------------------------------------------

    def run(self) -> int:
        try:
            self._start()
        except ConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - one line for the operator, exit 1
            log.error("cannot start: %s", " ".join(str(exc).split()))
            return 1
        assert self.reader is not None
        try:
            self._loop()
        except DeliveryFailed as exc:
            log.error("stopping: %s", exc)
            return 1
        finally:
            self.reader.stop()
        return self._shutdown()

    def _start(self) -> None:
        stored = self.offsets.load()
        self.signals.open(None if stored is None else stored.get("signal_offset"))
        self.admin.ensure(self.dispatcher.internal_topics())
        self.position = self._start_position(stored)
        if stored is not None and stored.get("snapshot"):
            self.snapshots.restore(stored["snapshot"])
        elif stored is None and self.config.snapshot_mode == "initial":
            self.snapshots.start_initial()
        # The start position is committed before anything streams: a crash right after a
        # first start must resume from here, not from "the current position" again.
        self.offsets.checkpoint(0, self.state())
        self.offsets.commit_acked(self.sink)
        self.offsets.flush(30)
        self.reader = ReaderProcess(self.config.mysql_settings(), self.config.server_id,
                                   self.position, self.queue)
        self.reader.start()

    def _loop(self) -> None:
        next_checkpoint = time.monotonic() + CHECKPOINT_INTERVAL
        next_progress = 0.0
        next_signals = 0.0
        dispatcher = self.dispatcher
        while not self.stopping.is_set():
            busy = self.snapshots.wants_cpu()
            batch = self.queue.take(0.0 if busy else 0.1)
            if self.queue.failure is not None:
                raise DeliveryFailed(self.queue.failure)
            for tx in batch:
                dispatcher.apply(tx)
                self.position = self.position.advance(tx.gtid)
                self.file, self.pos, self.ts_sec = tx.file, tx.end_pos, tx.ts_sec
                self.snapshots.after_transaction(self.position, tx.file, tx.end_pos)
            now = time.monotonic()
            if now >= next_signals:
                for received in self.signals.poll(0):
                    self.snapshots.on_signal(received)
                next_signals = now + SIGNAL_INTERVAL
            caught_up = not batch and len(self.queue) == 0
            self.snapshots.step(self.position, caught_up)
            dispatcher.maybe_heartbeat(now, self.position)
            self.sink.poll(0)
            if now >= next_checkpoint:
                self.offsets.checkpoint(self.sink.mark(), self.state())
                next_checkpoint = now + CHECKPOINT_INTERVAL
            self.offsets.commit_acked(self.sink)
            if now >= next_progress:
                self.snapshots.log_progress()
                next_progress = now + PROGRESS_INTERVAL

    def _shutdown(self) -> int:
        log.info("stopping: flushing %d in-flight records", self.sink.in_flight())
        if not self.sink.flush(FLUSH_TIMEOUT):
            log.error("stopping: records still unacknowledged after %.0fs; offsets not "
                      "advanced past them", FLUSH_TIMEOUT)
            return 1
        self.offsets.checkpoint(self.sink.mark(), self.state())
        self.offsets.commit_acked(self.sink)
        if not self.offsets.flush(FLUSH_TIMEOUT):
            log.error("stopping: offsets could not be committed")
            return 1
        self.signals.close()
        log.info("stopped cleanly at gtids=%s", self.position)
        return 0


def run_connector(config: ConnectorConfig) -> int:
    """`gtidmark run`: stream until SIGTERM/SIGINT, then flush, commit and exit 0."""
    try:
        engine = Engine(config)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - one line for the operator
        log.error("cannot start: %s", exc)
        return 1

    def request_stop(signum: int, _frame: Any) -> None:
        log.info("received %s, stopping", signal.Signals(signum).name)
        engine.stopping.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    return engine.run()
