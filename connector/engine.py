"""The connector's main loop: reader → dispatcher → encoder → sink, offsets after acks.

One thread applies transactions in binlog order and opens and closes the snapshot's chunk
windows; the binlog reader and the chunk reader (each its own process) decode and SELECT.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback

import pymysql

from connector.binlog.declared import DeclaredColumns
from connector.binlog.process import ReaderProcess
from connector.binlog.queue import ChangeQueue
from connector.binlog.transactions import Transaction
from connector.catalog import Catalog
from connector.control import (
    Command,
    CommandRefused,
    EngineControl,
    stop_first,
)
from connector.dispatcher import CaptureFailed, Dispatcher
from connector.engine_view import engine_view
from connector.events.envelope import EventEncoder
from connector.flavours import MARIADB, Flavour, flavour_named
from connector.gtid import Position
from connector.kafka.internal_topics import check_history_topic, history_spec
from connector.kafka.sink import DeliveryFailed, Sink, ha_producer
from connector.kafka.topics import TopicAdmin
from connector.kafka.transactions import TransactionalSink
from connector.launch import LaunchPoint
from connector.leadership.fencing import Leadership, SteppedDown
from connector.leadership.lease import Lease
from connector.offsets.commit import Committer, TransactionalCommitter
from connector.offsets.signal_mark import (
    act_on_signals,
    act_on_source_signals,
    attempts_that_died,
    source_attempts_that_died,
)
from connector.offsets.store import OffsetStore
from connector.offsets.value import ConnectorOffsets
from connector.preflight import check_server
from connector.settings.errors import ConfigError
from connector.settings.filters import TableFilter
from connector.settings.model import ConnectorConfig
from connector.snapshot.chunk_reader import ChunkReader
from connector.snapshot.coordinator import SnapshotCoordinator
from connector.snapshot.session import snapshot_session
from connector.snapshot.source import ChunkSource
from connector.start_checks import database_failure
from connector.start_position import (
    purged_under_when_needed,
    replica_connection,
    snapshot_at_start,
    start_position,
    usable_offsets,
)
from signals.channel import SignalChannel
from signals.source import SourceSignals

log = logging.getLogger("gtidmark")

CHECKPOINT_INTERVAL = 0.2  # how often the state is noted; it is written once acked
PROGRESS_INTERVAL = 1.0
SIGNAL_INTERVAL = 0.2
COMMIT_PENDING_WAIT = 0.005  # the idle wait while an exactly-once commit is due or running
FLUSH_TIMEOUT = 60.0
STEPPED_DOWN = -1  # Engine.run: leadership lost; the instance goes back to standby
START_AGAIN = -2  # Engine.run: stopped cleanly to start again (when_needed, binlog purged)
START_RETRY_S = 5.0


VIEW_INTERVAL = 0.2  # how often the REST server's view of the engine is refreshed


class Engine:
    # Built by `_start`, not the constructor: a Kafka client may refuse the user's settings,
    # and the events need the server's flavour; `run` handles a failed start.
    admin: TopicAdmin
    sink: Sink
    committer: Committer | TransactionalCommitter
    catalog: Catalog
    signals: SignalChannel
    source_signals: SourceSignals
    snapshots: SnapshotCoordinator
    dispatcher: Dispatcher

    def __init__(self, config: ConnectorConfig, control: EngineControl | None = None,
                 paused: bool = False, stopping: threading.Event | None = None,
                 lease: Lease | None = None, retry_start: bool = False,
                 launch: LaunchPoint | None = None) -> None:
        """No I/O here: a broker or a replica that is away fails `run`'s start."""
        self.config = config
        self.launch = launch  # where a first start begins (this process's first Engine)
        # After a step-down a failed start is the broker or the replica still away: wait
        # and go back to standby instead of exiting (the lease is kept meanwhile).
        self.retry_start = retry_start
        self.control = control
        self.paused = paused  # Kafka Connect's PAUSED: nothing taken from the reader
        self.stop_command: Command | None = None  # the REST stop/restart that ended the run
        self.failure: str | None = None  # what ended the run with exit 1, for the status
        self.transactions = 0
        self.behind_source_ms = -1
        self.last_event_at: float | None = None  # time.monotonic() of the last batch taken
        self._next_view = 0.0
        self.stopping = stopping or threading.Event()
        self.lease = lease
        # Opened by `_start`; built here as its `committed` is read after a failed start too.
        self.offsets = OffsetStore(config)
        self.leadership = Leadership(lease, self.offsets.epoch_holder, config.offsets_topic)
        self.queue: ChangeQueue[Transaction] = ChangeQueue()
        self.flavour: Flavour = MARIADB  # the server's, once `_start` has asked it
        self.position: Position = MARIADB.position("")
        self.file = ""
        self.pos = 0
        self.ts_sec = 0
        self.reader: ReaderProcess | None = None
        self.xa_hold: str | None = None  # while an XA is open: where a restart must resume
        # Debezium's offsets stopped inside a transaction: its `event`/`row`, kept in ours
        # until the stream is past that transaction (connector/binlog/resume_skip.py).
        self.mid_transaction = (0, 0)
        self._mid_transaction_at: Position | None = None
        self.source_open = False  # a source transaction is partly sent (it came in pieces)
        self.restart = False  # the loop ended for a start again (START_AGAIN)

    def _build(self, config: ConnectorConfig) -> None:
        """The Kafka clients and the pipeline; `config` carries the server's flavour."""
        self.config = config
        self.admin = TopicAdmin(config.producer_settings(), config.topic_creation)
        producer = config.producer_settings()
        if self.lease is not None:
            producer = ha_producer(producer, config.ha_session_timeout_ms)
        guard = None if self.lease is None else self.leadership
        if config.exactly_once:
            self.sink = sink = TransactionalSink(producer, config.transactional_id,
                                                 config.failure_handling_mode, guard)
            self.committer = TransactionalCommitter(
                self.offsets, sink, self.leadership, self.state, config.transaction_boundary,
                config.transaction_boundary_interval_ms / 1000, lambda: self.source_open)
        else:
            self.sink = Sink(producer, config.failure_handling_mode, guard)
            self.committer = Committer(self.offsets, self.sink, self.leadership, self.state)
        declared = DeclaredColumns()
        self.catalog = Catalog(lambda: replica_connection(config), declared)
        declared.charset_lookup = self.catalog.database_charset
        encoder = EventEncoder(config, enrich=self.catalog.enrich)
        table_filter = TableFilter(config)
        self.signals = SignalChannel(config)
        self.source_signals = SourceSignals(config.source_signal_table)
        source = ChunkSource(lambda: snapshot_session(config), table_filter,
                             flavour_named(config.flavour))
        # The dispatcher, built next, holds the coordinator; the coordinator only emits.
        self.snapshots = SnapshotCoordinator(
            config, source, ChunkReader(config, wake=self.queue.wake),
            lambda schema: encoder.table(schema).row_encoding,
            lambda *chunk: self.dispatcher.emit_snapshot_rows(*chunk))
        self.dispatcher = Dispatcher(config, encoder, self.sink, table_filter, self.admin,
                                     self.snapshots, declared, self.catalog.table,
                                     self.source_signals)

    # -- state -------------------------------------------------------------------------

    def state(self) -> ConnectorOffsets:
        """The offsets value: where streaming is, snapshot progress, signal position."""
        event, row = self.mid_transaction if self.position == self._mid_transaction_at \
            else (0, 0)
        return ConnectorOffsets(
            gtids=self.xa_hold or str(self.position), file=self.file, pos=self.pos,
            event=event, row=row,
            server_id=self.dispatcher.last_server_id, ts_sec=self.ts_sec,
            snapshot=self.snapshots.saved(), signal_offset=self.signals.next_offset,
            signal_in_progress=self.signals.unfinished,
            source_signal_in_progress=self.source_signals.unfinished,
            epoch=self.leadership.epoch, writer=self.leadership.instance)

    # -- run ---------------------------------------------------------------------------

    def run(self) -> int:
        try:
            self._start()
        except ConfigError:
            raise
        except SteppedDown as exc:
            if self.lease is None:  # another instance writes: not ours to run alongside
                log.error("cannot start: %s", exc)
                self.failure = traceback.format_exc()
                return 1
            # Frozen between its start record and the check: a leader after it owns the
            # epoch now. Back to standby, as a leader fenced later would.
            return self._step_down(exc, "")
        except Exception as exc:  # noqa: BLE001 - one line for the operator, exit 1
            line = database_failure(self.config, exc) if isinstance(exc, pymysql.MySQLError) \
                else " ".join(str(exc).split())
            if self.retry_start:
                log.warning("cannot start yet: %s; standby, trying again in %.0fs", line,
                            START_RETRY_S)
                self.stopping.wait(START_RETRY_S)
                return STEPPED_DOWN
            log.error("cannot start: %s", line)
            self.failure = traceback.format_exc()
            return 1
        assert self.reader is not None
        try:
            try:
                self._loop()
            except DeliveryFailed as exc:
                if exc.restart:
                    raise SteppedDown(str(exc)) from None
                if self.lease is None or not exc.timed_out:
                    raise
                raise SteppedDown(f"{exc} (HA bounds delivery by message.timeout.ms; the "
                                  "next leader resumes from the committed offsets)") from None
        except (DeliveryFailed, CaptureFailed) as exc:
            log.error("stopping: %s", exc)
            self.failure = traceback.format_exc()
            return 1
        except SteppedDown as exc:
            return self._step_down(exc, " (records in flight may repeat, none are lost)")
        finally:
            self.reader.stop()
            self.snapshots.close()
        code = self._shutdown()
        return START_AGAIN if code == 0 and self.restart else code

    def _step_down(self, exc: SteppedDown, in_flight: str) -> int:
        """Back to standby: nothing more is committed or sent by this instance, and it leads
        again only through a new assignment of the group (a zombie must not)."""
        log.warning("stepping down to standby: %s; nothing more is committed by this "
                    "instance%s", exc, in_flight)
        if self.lease is not None:
            self.lease.release()
        self.offsets.abandon()
        self.sink.abandon()
        self.signals.close()
        return STEPPED_DOWN

    def _start(self) -> None:
        self.flavour = flavour = check_server(lambda: replica_connection(self.config))
        if flavour.name != self.config.flavour:
            log.info("the server is %s: events are written as Debezium's %s connector "
                     "writes them (connector.class %s is not used)", flavour.name,
                     flavour.name, self.config.connector_class)
        self._build(self.config.with_server_flavour(flavour.name))
        self.offsets.open(self.admin)
        if isinstance(self.sink, TransactionalSink):
            self.sink.open(30)  # fences an earlier instance before its offsets are read
        stored, newest_epoch = self.offsets.load()
        # Every start writes in a new epoch, leased or not (connector/offsets/resume.py): only
        # the newest epoch's first writer counts on load.
        self.leadership.begin(newest_epoch)
        if self.lease is not None:
            log.info("active: epoch %d, lease group %s", self.leadership.epoch,
                     self.lease.group)
        launched = None if self.launch is None else self.launch.signal_end
        self.signals.open(launched if stored is None else stored.signal_offset,
                          unfinished=None if stored is None else attempts_that_died(stored))
        self.source_signals.open(None if stored is None else source_attempts_that_died(stored))
        self.admin.ensure([self.config.history_topic], spec=history_spec())
        check_history_topic(self.admin, self.config.history_topic)
        self.admin.ensure(self.dispatcher.internal_topics())
        stored = usable_offsets(self.config, flavour, stored)
        if stored is not None:
            self.file, self.pos, self.ts_sec = stored.file, stored.pos, stored.ts_sec
        self.position = start_position(self.config, flavour, stored, self.launch)
        if stored is not None and (stored.event or stored.row):
            self.mid_transaction, self._mid_transaction_at = (stored.event, stored.row), \
                self.position
            log.info("resuming inside a transaction (offsets event=%d row=%d): its first %d "
                     "binlog events and %d rows after them were sent already, skipped",
                     stored.event, stored.row, stored.event, stored.row)
        if stored is not None and stored.snapshot:
            self.snapshots.restore(stored.snapshot)
        elif snapshot_at_start(self.config.snapshot_mode, stored):
            if stored is not None:
                log.info("snapshot.mode=always: a snapshot of every captured table at this "
                         "start; streaming resumes from the committed offsets meanwhile")
            self.snapshots.start_initial()
        # The start position is committed before anything streams: a crash right after a
        # first start must resume from here, not from "the current position" again.
        self.committer.commit()
        if not self.offsets.flush(30):
            self.offsets.abandon()  # it must not land after a later start's record
            raise RuntimeError(self.offsets.failure or "the start position was not committed "
                               f"to {self.config.offsets_topic} within 30s")
        # Another instance may have taken the same epoch (it read the topic before our
        # start record landed): the first record of an epoch owns it.
        self.leadership.check_epoch()
        self.reader = ReaderProcess(self.config.mysql_settings(), self.config.server_id,
                                   flavour, self.position, self.queue,
                                   resume=self.mid_transaction)
        self.reader.start()

    def _loop(self) -> None:
        next_checkpoint = time.monotonic() + CHECKPOINT_INTERVAL
        next_progress = 0.0
        next_signals = 0.0
        dispatcher = self.dispatcher
        while not self.stopping.is_set():
            if self.control is not None and self._control_step():
                continue
            idle_wait = 0.0 if self.snapshots.wants_cpu() else (
                COMMIT_PENDING_WAIT if self.committer.commit_pending else 0.1)
            batch = self.queue.take(idle_wait)
            if self.queue.failure is not None:
                if purged_under_when_needed(self.config, self.flavour, self.position,
                                            self.queue.failure):
                    self.restart = True
                    return  # stops cleanly; the next start snapshots again
                raise DeliveryFailed(self.queue.failure)
            for tx in batch:
                dispatcher.apply(tx, self.position)
                if dispatcher.signal_rows and not self._act_on_source_signals():
                    return  # stopping: the offsets stay before this transaction
                self.source_open = tx.partial
                if tx.partial:
                    self.snapshots.after_piece(tx.gtid)
                    continue  # the position moves only at a transaction's end
                self.position = self.position.advance(tx.gtid)
                self.xa_hold = tx.hold
                self.file, self.pos, self.ts_sec = tx.file, tx.end_pos, tx.ts_us // 1_000_000
                self.snapshots.after_transaction(self.position, tx.file, tx.end_pos)
                self.committer.transaction_end()
            if batch:
                self.transactions += len(batch)
                self.last_event_at = time.monotonic()
                self.behind_source_ms = max(0, int(time.time() * 1000) - self.ts_sec * 1000)
            now = time.monotonic()
            if now >= next_signals:
                act_on_signals(self.signals, self.offsets, self.snapshots.on_signal)
                next_signals = now + SIGNAL_INTERVAL
            caught_up = not batch and len(self.queue) == 0
            self.snapshots.step(self.position, caught_up)
            dispatcher.maybe_heartbeat(now, self.position)
            self.sink.poll(0)
            noting = now >= next_checkpoint
            if noting:
                next_checkpoint = now + CHECKPOINT_INTERVAL
            self.committer.commit(note=noting, leading_at=now)
            if now >= next_progress:
                self.snapshots.log_progress()
                next_progress = now + PROGRESS_INTERVAL

    def _act_on_source_signals(self) -> bool:
        """Act on the signal table's rows of the transaction just dispatched, before the
        position passes it; False when stopping while one waits for the replica."""
        rows, self.dispatcher.signal_rows = self.dispatcher.signal_rows, []
        self.source_open = True  # its records are sent, its position not passed: no commit
        return act_on_source_signals(rows, self.source_signals, self.offsets,
                                     self.snapshots.on_signal, self._wait_deferred)

    def _wait_deferred(self, delay: float) -> bool:
        """Wait `delay` s for a deferred source signal, acknowledgements and commits of the
        states noted before going on; False when the connector is stopping."""
        deadline = time.monotonic() + delay
        while not self.stopping.is_set():
            now = time.monotonic()
            if now >= deadline:
                return True
            self.sink.poll(0)
            self.committer.commit(note=False, leading_at=now)
            self.stopping.wait(min(0.1, deadline - now))
        return False

    # -- REST control (connector/rest) ---------------------------------------------------

    def _control_step(self) -> bool:
        """Apply REST commands and refresh the view; True while paused (nothing taken).

        Paused, the reader blocks on the full queue and the position stays where it is;
        acknowledgements are still collected and offsets committed.
        """
        control = self.control
        assert control is not None
        for command in control.pending():
            if command.kind in ("pause", "resume"):
                self.paused = command.kind == "pause"
                log.info("connector %s (REST)", "paused" if self.paused else "resumed")
                command.reply.set_result(None)
            elif command.kind in ("stop", "restart"):
                log.info("connector %s requested (REST)", command.kind)
                self.stop_command = command
                self.stopping.set()
            else:
                command.reply.set_exception(CommandRefused(400, stop_first(self.config.name)))
        now = time.monotonic()
        if now >= self._next_view:
            control.publish(engine_view(self))
            self._next_view = now + VIEW_INTERVAL
        if not self.paused:
            return False
        self.sink.poll(0)
        self.committer.commit(leading_at=now)
        control.wait(0.1)
        return True

    def _shutdown(self) -> int:
        log.info("stopping: flushing %d in-flight records", self.sink.in_flight())
        if not self.sink.flush(FLUSH_TIMEOUT):
            log.error("stopping: records still unacknowledged after %.0fs; offsets not "
                      "advanced past them", FLUSH_TIMEOUT)
            return 1
        try:
            self.committer.commit()
        except DeliveryFailed as exc:  # exactly once: the last transaction did not commit
            log.error("stopping: %s", exc)
            return 1
        if not self.offsets.flush(FLUSH_TIMEOUT):
            log.error("stopping: offsets could not be committed")
            return 1
        self.signals.close()
        self.catalog.close()
        log.info("stopped cleanly at gtids=%s", self.position)
        return 0
