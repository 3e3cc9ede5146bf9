"""`gtidmark run`'s lifecycle: the lease, then one Engine after another, for both run modes.

An instance waits for the lease (`ha.enabled`), runs an Engine until it stops, fails or
steps down, and in the last case waits for the lease again. An Engine that fails or steps
down gives the lease up (connector/leadership/lease.py): a standby takes over. With REST (`control`) a
restart ends the running Engine the way SIGTERM does (flush, commit) and starts a new one
from the committed offsets; while STOPPED or FAILED no Engine runs and this thread answers
the commands itself: that is when Kafka Connect lets offsets be altered or reset. Without
REST nothing restarts a failed Engine: the process exits. Every state the connector
passes through is published to one EngineControl (the REST server's, or a private one) and,
while this instance leads, written to the status topic (connector/status_recorder.py).
"""

from __future__ import annotations

import logging
import threading

from connector.control import (
    NOT_LEADING,
    Command,
    CommandRefused,
    EngineControl,
    EngineView,
    State,
    stop_first,
)
from connector.engine import START_AGAIN, STEPPED_DOWN, Engine
from connector.kafka.status_topic import StatusWriter
from connector.kafka.topics import TopicAdmin
from connector.launch import LaunchPoint, read_launch_point
from connector.leadership.lease import Lease
from connector.offsets.store import OffsetStore, read_committed
from connector.offsets.value import ConnectorOffsets
from connector.settings.errors import ConfigError
from connector.settings.model import ConnectorConfig
from connector.start_checks import ServicesUnreachable, check_services
from connector.start_position import replica_connection
from connector.status_recorder import StatusRecorder
from signals.channel import ensure_signal_topic, signal_client_settings

log = logging.getLogger("gtidmark")
rest_log = logging.getLogger("gtidmark.rest")

OFFSETS_TIMEOUT = 30.0


class LeaseUnavailable(RuntimeError):
    """The leader group could not be joined; the reason is logged."""


def open_lease(config: ConnectorConfig) -> Lease:
    """Join the leader group over the signal topic (created with one partition if missing)."""
    settings = signal_client_settings(config, config.consumer_settings())
    ensure_signal_topic(settings, config.signal_kafka_topic, 30.0)
    lease = Lease(settings, f"{config.name}-leader", config.signal_kafka_topic,
                  config.ha_session_timeout_ms)
    lease.start()
    return lease


def join_group(config: ConnectorConfig) -> Lease | None:
    """The lease of this connector's group, or None when `ha.enabled` is false."""
    if not config.ha_enabled:
        return None
    try:
        return open_lease(config)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - one line for the operator
        log.error("cannot start: %s", " ".join(str(exc).split()))
        raise LeaseUnavailable(str(exc)) from None


def wait_for_lease(lease: Lease | None, stopping: threading.Event) -> bool:
    """True when this instance may lead (at once without HA); False when stopping first."""
    if lease is None:
        return True
    log.info("standby: waiting for the lease (group %s)", lease.group)
    if lease.acquire(stopping):
        return True
    log.info("stopped while standby")
    return False


class Supervisor:
    """Owns the connector's lifecycle; `control` is the REST server's channel, if any."""

    def __init__(self, config: ConnectorConfig, control: EngineControl | None = None) -> None:
        self.config = config
        self.lease: Lease | None = None
        self.control = control
        # Where the Engines and this thread publish their state: the REST channel, or one
        # nothing sends commands to; the status topic sees every view published there.
        self.views = control if control is not None else EngineControl()
        self.status = StatusRecorder(config, StatusWriter(config))
        self.views.on_publish = self.status.observe
        self.stopping = threading.Event()
        self.engine: Engine | None = None
        self.paused = False
        self.led = False  # an Engine stepped down before: its successor retries its start
        self.launch: LaunchPoint | None = None  # for the first Engine only

    def request_stop(self) -> None:
        self.stopping.set()
        engine = self.engine
        if engine is not None:
            engine.stopping.set()

    def run(self) -> int:
        """Stream until stopped, then flush, commit and exit 0 (or 1 when it failed)."""
        try:
            state = self._check_services()
            if state != "RUNNING":
                return 1 if state == "FAILED" else 0  # stopped while idle, as after an Engine
            if self._stopped_while_starting():
                return 0
            self.launch = read_launch_point(self.config, lambda: replica_connection(self.config))
            if self._stopped_while_starting():
                return 0
            self.lease = join_group(self.config)
            return self._supervise()
        except LeaseUnavailable:
            return 1
        finally:
            self.status.close()  # before leaving the group: lands before a standby's
            if self.lease is not None:
                self.lease.close()

    def _check_services(self) -> State:
        """Both services at once, every failure named, before any wait on either; RUNNING
        when both answer, else the state a SIGTERM found. Kafka not answering ends the run (a
        Connect worker does not start without its broker). With REST, a database that does not
        answer or refuses the user leaves the connector FAILED with that line as its trace, as
        Connect shows a task whose start failed, and POST .../restart checks again (as does
        resume after PUT .../stop); without REST the run ends."""
        while True:
            try:
                check_services(self.config, lambda: replica_connection(self.config))
                return "RUNNING"
            except ServicesUnreachable as exc:
                control = self.control
                if control is None or exc.database is None or exc.kafka is not None:
                    raise
                log.error("cannot start: %s", exc.database)
                if not self.stopping.is_set():
                    rest_log.error("connector failed; it stays FAILED until POST "
                                   "/connectors/%s/restart", self.config.name)
                state = self._while_idle(control, "FAILED", exc.database,
                                         self._committed_in_kafka())
                if state != "RUNNING":
                    return state
                control.publish(EngineView(state="RESTARTING"))

    def _committed_in_kafka(self) -> ConnectorOffsets | None:
        """The offsets GET .../offsets shows while the start is FAILED: Kafka answered, and
        they are read from it without the database."""
        try:
            return read_committed(self.config)
        except Exception as exc:  # noqa: BLE001 - FAILED all the same, without offsets shown
            log.warning("the committed offsets could not be read: %s", exc)
            return None

    def _stopped_while_starting(self) -> bool:
        """A SIGTERM during a start step (each may wait up to 30 s) ends the run after it."""
        if self.stopping.is_set():
            log.info("stopped before streaming started")
        return self.stopping.is_set()

    def _supervise(self) -> int:
        state: State = "RUNNING"
        trace: str | None = None
        committed: ConnectorOffsets | None = None
        while not self.stopping.is_set():
            if state == "RUNNING":
                state, trace, committed = self._run_engine()
            elif self.control is None:
                break  # nothing can restart it: the process exits
            else:
                state = self._while_idle(self.control, state, trace, committed)
                trace = None if state == "RUNNING" else trace
        return 1 if state == "FAILED" else 0

    def _publish(self, view: EngineView) -> None:
        self.views.publish(view)

    def _run_engine(self) -> tuple[State, str | None, ConnectorOffsets | None]:
        """Run one Engine until it ends; the state it leaves the connector in."""
        if self.lease is not None:
            self._publish(EngineView(state="UNASSIGNED"))  # a standby, as in Connect
            if not wait_for_lease(self.lease, self.stopping):
                return "RUNNING", None, None
        self.status.lead()
        self._publish(EngineView(state="RESTARTING"))
        engine = Engine(self.config, self.views, paused=self.paused, lease=self.lease,
                        retry_start=self.led, launch=self.launch)
        self.launch = None
        self.engine = engine
        if self.stopping.is_set():
            engine.stopping.set()
        code = engine.run()
        self.engine = None
        self.paused = engine.paused
        if code == STEPPED_DOWN:
            self.led = True
            self.status.step_down()  # the new leader writes its state
            if engine.stop_command is not None:  # not done: another instance leads now
                engine.stop_command.reply.set_exception(CommandRefused(409, NOT_LEADING))
            return "RUNNING", None, engine.offsets.committed  # back to waiting for the lease
        command: Command | None = engine.stop_command
        if code == START_AGAIN:
            if command is None:
                return "RUNNING", None, engine.offsets.committed  # the next Engine snapshots
            code = 0  # a REST stop or restart came meanwhile: it is done
        if code != 0:
            trace = engine.failure or "the connector could not flush and commit on stopping; " \
                "see its log"
            self._publish(EngineView(state="FAILED", trace=trace,
                                     committed=engine.offsets.committed))
            if self.lease is not None:  # a standby takes over; a restart joins again
                self.status.step_down()  # FAILED is written before the standby's RUNNING
                self.lease.release()
                log.warning("the task FAILED: lease released (group %s), a standby takes "
                            "over", self.lease.group)
            if command is not None:
                command.reply.set_exception(CommandRefused(500, "the connector failed while "
                                                                "stopping; see its status"))
            if self.control is not None and not self.stopping.is_set():
                rest_log.error("connector failed; it stays FAILED until POST "
                               "/connectors/%s/restart", self.config.name)
            return "FAILED", trace, engine.offsets.committed
        state: State = "RUNNING"
        if command is not None:
            state = "STOPPED" if command.kind == "stop" else "RUNNING"
            self._publish(EngineView(state=state, committed=engine.offsets.committed))
            command.reply.set_result(None)
        return state, None, engine.offsets.committed

    def _while_idle(self, control: EngineControl, state: State, trace: str | None,
                    committed: ConnectorOffsets | None) -> State:
        """STOPPED or FAILED: answer commands here until one starts an Engine again. A stop
        while FAILED leaves it STOPPED, as Connect stops a connector from any state."""
        store: OffsetStore | None = None
        while not self.stopping.is_set():
            control.publish(EngineView(state=state, trace=trace, committed=committed))
            for command in control.pending():
                kind = command.kind
                if kind.endswith("offsets"):
                    if state != "STOPPED":
                        command.reply.set_exception(
                            CommandRefused(400, stop_first(self.config.name)))
                        continue
                    if store is None:
                        store = OffsetStore(self.config)
                        store.open(TopicAdmin(self.config.producer_settings()))
                    try:
                        committed = self._modify_offsets(store, command)
                    except CommandRefused as exc:
                        command.reply.set_exception(exc)
                        continue
                    control.publish(EngineView(state=state, committed=committed))
                    command.reply.set_result(None)
                    continue
                if kind in ("pause", "resume"):
                    self.paused = kind == "pause"
                if kind == "stop" and state == "FAILED":
                    state, trace = "STOPPED", None  # shown before the 204: offsets may change
                    control.publish(EngineView(state=state, committed=committed))
                command.reply.set_result(None)
                if (kind == "restart" and state == "FAILED") or (
                        kind in ("pause", "resume") and state == "STOPPED"):
                    return "RUNNING"
            control.wait(0.5)
        return state

    def _modify_offsets(self, store: OffsetStore,
                        command: Command) -> ConnectorOffsets | None:
        value = ConnectorOffsets.from_json(command.payload) \
            if command.kind == "alter-offsets" else None
        if not store.replace(value, OFFSETS_TIMEOUT):
            raise CommandRefused(500, "the offsets could not be written to Kafka")
        rest_log.info("offsets %s (REST): %s", "altered" if value is not None else "reset",
                      "position forgotten" if value is None else f"gtids={value.gtids}")
        return store.committed  # as written: in the next writer epoch
