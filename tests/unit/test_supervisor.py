"""The Supervisor with engines and start checks scripted, no services: plain `gtidmark run`,
and with REST the FAILED start that waits for a restart or a stop."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from connector import supervisor as lifecycle
from connector.control import CommandKind, EngineControl, EngineView
from connector.engine import START_AGAIN, STEPPED_DOWN
from connector.offsets.value import ConnectorOffsets
from connector.settings.errors import ConfigError
from connector.settings.parse import parse_config
from connector.start_checks import ServicesUnreachable
from tests.services import wait_for as wait_until

CONFIG = parse_config({"name": "c", "config": {
    "database.hostname": "replica", "database.user": "cdc", "database.server.id": "5400",
    "topic.prefix": "shop", "bootstrap.servers": "kafka:9092"}})


class Written:
    """The status topic: every record put, in order."""

    def __init__(self, _config: Any = None) -> None:
        self.records: list[tuple[str, Any]] = []

    def put(self, key: str, record: Any) -> None:
        self.records.append((key, record))

    def flush(self, _timeout: float) -> bool:
        return True


@pytest.fixture(autouse=True)
def no_status_topic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lifecycle, "StatusWriter", Written)


class Lease:
    """Given at once, unless the supervisor is stopping."""

    group = "c-leader"

    def __init__(self) -> None:
        self.acquired = 0
        self.released = 0

    def acquire(self, stopping: threading.Event) -> bool:
        if stopping.is_set():
            return False
        self.acquired += 1
        return True

    def release(self) -> None:
        self.released += 1


class Engines:
    """Builds Engines whose runs return the scripted codes, and keeps how each was built."""

    def __init__(self, *codes: int) -> None:
        self.codes = list(codes)
        self.built: list[dict[str, Any]] = []

    def __call__(self, config: Any, control: Any, **kwargs: Any) -> Any:
        self.built.append({"control": control, **kwargs})
        code = self.codes.pop(0)
        engine = type("Engine", (), {})()
        engine.stopping, engine.paused, engine.stop_command = threading.Event(), False, None
        engine.failure, engine.offsets = "trace", type("Offsets", (), {"committed": None})()
        engine.run = lambda: code
        return engine


def plain(monkeypatch: pytest.MonkeyPatch, *codes: int) -> tuple[
        lifecycle.Supervisor, Engines, Lease]:
    engines, lease = Engines(*codes), Lease()
    monkeypatch.setattr(lifecycle, "Engine", engines)
    supervisor = lifecycle.Supervisor(CONFIG)
    supervisor.lease = lease  # type: ignore[assignment]
    supervisor.launch = "launch"  # type: ignore[assignment]
    return supervisor, engines, lease


def test_after_a_step_down_the_next_engine_waits_for_the_lease_and_retries_its_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    supervisor, engines, lease = plain(monkeypatch, STEPPED_DOWN, 1)
    assert supervisor._supervise() == 1
    assert lease.acquired == 2
    views = supervisor.views  # no REST: a channel of its own, for the status topic
    assert [(e["retry_start"], e["launch"], e["control"]) for e in engines.built] == [
        (False, "launch", views), (True, None, views)]


def test_a_failed_engine_ends_a_plain_run_with_exit_1_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    supervisor, engines, _ = plain(monkeypatch, 1)
    assert supervisor._supervise() == 1  # no REST: nothing waits in FAILED for a restart
    assert len(engines.built) == 1


def test_a_failed_engine_is_written_failed_with_its_trace_before_the_lease_goes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    supervisor, _, lease = plain(monkeypatch, 1)
    written = supervisor.status._writer
    assert isinstance(written, Written)
    released_after: list[int] = []
    lease.release = lambda: released_after.append(len(written.records))  # type: ignore
    assert supervisor._supervise() == 1
    assert [(k, r.state, r.trace) for k, r in written.records] == [
        ("status-connector-c", "RESTARTING", None), ("status-task-c-0", "RESTARTING", None),
        ("status-connector-c", "RUNNING", None), ("status-task-c-0", "FAILED", "trace")]
    assert released_after == [4]


def test_an_engine_that_stops_to_start_again_is_followed_by_another_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """when_needed, binlog purged mid-stream: the next Engine's start snapshots again."""
    supervisor, engines, lease = plain(monkeypatch, START_AGAIN, 1)
    assert supervisor._supervise() == 1
    assert len(engines.built) == 2 and lease.released == 1  # released by the failure only
    assert [(e["retry_start"], e["launch"]) for e in engines.built] == [
        (False, "launch"), (False, None)]


def test_a_stop_before_a_step_down_exits_0_without_another_engine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    supervisor, engines, _ = plain(monkeypatch, STEPPED_DOWN)
    original = engines.__call__

    def then_stop(config: Any, control: Any, **kwargs: Any) -> Any:
        supervisor.request_stop()  # SIGTERM while the engine runs, before it steps down
        return original(config, control, **kwargs)
    monkeypatch.setattr(lifecycle, "Engine", then_stop)
    assert supervisor._supervise() == 0
    assert len(engines.built) == 1


def test_a_stop_during_the_start_checks_exits_0_before_the_next_step(
        monkeypatch: pytest.MonkeyPatch) -> None:
    supervisor = lifecycle.Supervisor(CONFIG)
    monkeypatch.setattr(lifecycle, "check_services",
                        lambda *_a: supervisor.request_stop())  # SIGTERM while checking

    def no_next_step(*_a: Any) -> Any:
        raise AssertionError("the start went on after the stop")
    monkeypatch.setattr(lifecycle, "read_launch_point", no_next_step)
    monkeypatch.setattr(lifecycle, "join_group", no_next_step)
    assert supervisor.run() == 0


# -- with REST: a start the database refuses leaves the task FAILED ---------------------

REST = parse_config({"name": "c", "config": {
    "database.hostname": "replica", "database.user": "cdc", "database.server.id": "5400",
    "topic.prefix": "shop", "bootstrap.servers": "kafka:9092", "rest.port": "8083"}})
IN_KAFKA = ConnectorOffsets(gtids="uuid:1-5", file="binlog.000002", pos=4)


class Watched(EngineControl):
    """The REST channel, with a wait for a published view instead of a sleep."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = threading.Condition()

    def publish(self, view: EngineView) -> None:
        super().publish(view)
        with self.changed:
            self.changed.notify_all()

    def wait_for(self, state: str, trace: str | None = None) -> EngineView:
        with self.changed:
            assert self.changed.wait_for(lambda: self.view().state == state and (
                trace is None or self.view().trace == trace), 2.0), self.view()
            return self.view()

    def do(self, kind: CommandKind, payload: Any = None) -> None:
        assert self.send(kind, payload).result(2.0) is None  # 204


class Store:
    """The offsets topic, opened only to be replaced while STOPPED."""

    def __init__(self, _config: Any) -> None:
        self.committed: ConnectorOffsets | None = None

    def open(self, _admin: Any) -> None:
        pass

    def replace(self, value: ConnectorOffsets | None, _timeout: float) -> bool:
        self.committed = value
        return True


class Started:
    """`Supervisor.run` in a thread, its start checks scripted; what it returned or raised."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *checks: Exception | None) -> None:
        self.checks, self.checked = list(checks), 0
        self.control = Watched()
        self.supervisor = lifecycle.Supervisor(REST, self.control)
        monkeypatch.setattr(lifecycle, "check_services", self.check)
        monkeypatch.setattr(lifecycle, "read_committed", lambda _config: IN_KAFKA)
        monkeypatch.setattr(lifecycle, "read_launch_point", lambda *_a: "launch")
        monkeypatch.setattr(lifecycle, "join_group", lambda _config: None)
        monkeypatch.setattr(lifecycle, "OffsetStore", Store)
        monkeypatch.setattr(lifecycle, "TopicAdmin", lambda _settings: None)
        monkeypatch.setattr(self.supervisor, "_supervise", lambda: 0)  # streamed, then stopped
        self.outcome: int | BaseException | None = None
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def check(self, *_a: Any) -> None:
        self.checked += 1
        failure = self.checks.pop(0) if self.checks else None
        if failure is not None:
            raise failure

    def run(self) -> None:
        try:
            self.outcome = self.supervisor.run()
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            self.outcome = exc

    def ended(self) -> int | BaseException | None:
        self.thread.join(2.0)
        assert not self.thread.is_alive()
        return self.outcome

    def stop(self) -> int | BaseException | None:
        self.supervisor.request_stop()  # SIGTERM
        self.control.send("pause")  # wakes the idle loop at once, as a request does
        return self.ended()


def refused(line: str) -> ServicesUnreachable:
    return ServicesUnreachable(line, None)


def test_a_restart_the_database_refuses_again_checks_again_and_shows_the_new_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    started = Started(monkeypatch, refused("first"), refused("second"))
    failed = started.control.wait_for("FAILED", "first")
    assert failed.committed == IN_KAFKA  # read from Kafka, which answered
    started.control.do("restart")
    assert started.control.wait_for("FAILED", "second").committed == IN_KAFKA
    assert started.checked == 2
    assert started.stop() == 1  # stopped while FAILED


def test_a_stop_while_the_start_is_failed_leaves_it_stopped_with_offsets_alterable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    started = Started(monkeypatch, refused("down"))
    started.control.wait_for("FAILED", "down")
    started.control.do("stop")
    view = started.control.view()  # already, when the 204 goes out
    assert (view.state, view.trace, view.committed) == ("STOPPED", None, IN_KAFKA)
    started.control.do("alter-offsets", {"gtids": "uuid:1-9", "signal_offset": None})
    assert started.control.view().committed == ConnectorOffsets(gtids="uuid:1-9")
    started.control.do("restart")  # Connect's restart leaves a stopped connector stopped
    assert started.control.view().state == "STOPPED" and started.checked == 1
    started.control.do("resume")
    assert started.ended() == 0  # checked again, and started
    assert started.checked == 2


def test_a_sigterm_while_stopped_after_a_failed_start_exits_0(
        monkeypatch: pytest.MonkeyPatch) -> None:
    started = Started(monkeypatch, refused("down"))
    started.control.wait_for("FAILED", "down")
    started.control.do("stop")
    assert started.stop() == 0


def test_settings_refused_on_restart_end_the_run_after_the_restart_is_answered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    started = Started(monkeypatch, refused("down"), ConfigError("database.user lacks REPLICATION"))
    started.control.wait_for("FAILED", "down")
    started.control.do("restart")  # the client has its 204
    outcome = started.ended()
    assert isinstance(outcome, ConfigError)  # `gtidmark run` exits 2 with its lines
    assert started.checked == 2


def test_a_stop_while_a_streaming_task_is_failed_leaves_it_stopped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    engines, control = Engines(1), Watched()
    monkeypatch.setattr(lifecycle, "Engine", engines)
    supervisor = lifecycle.Supervisor(REST, control)
    outcome: list[int] = []
    thread = threading.Thread(target=lambda: outcome.append(supervisor._supervise()),
                              daemon=True)
    thread.start()
    control.wait_for("FAILED", "trace")
    control.do("stop")
    assert control.view().state == "STOPPED"
    supervisor.request_stop()
    control.send("pause")
    thread.join(2.0)
    assert outcome == [0]  # stopped, not failed


def test_a_task_failed_behind_rest_gives_the_lease_up_and_a_restart_waits_for_it_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before (#32): the FAILED leader kept the lease, so no standby took over."""
    engines, control, lease = Engines(1, 1), Watched(), Lease()
    monkeypatch.setattr(lifecycle, "Engine", engines)
    supervisor = lifecycle.Supervisor(REST, control)
    supervisor.lease = lease  # type: ignore[assignment]
    outcome: list[int] = []
    thread = threading.Thread(target=lambda: outcome.append(supervisor._supervise()),
                              daemon=True)
    thread.start()
    control.wait_for("FAILED", "trace")
    assert (lease.acquired, lease.released) == (1, 1)
    control.do("restart")  # joins the group again; this one fails too
    wait_until(lambda: lease.released == 2, 2.0, "the second release")
    supervisor.request_stop()
    control.send("pause")
    thread.join(2.0)
    assert outcome == [1] and lease.acquired == 2
