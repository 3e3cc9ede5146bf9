"""The HTTP thread's commands and the engine's view: nothing waits for a later leader."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

import pytest

from connector import supervisor as lifecycle
from connector.control import NOT_LEADING, CommandRefused, EngineControl, EngineView
from connector.settings.parse import parse_config
from tests.unit.test_supervisor import Written

CONFIG = parse_config({"name": "c", "config": {
    "database.hostname": "replica", "database.user": "cdc", "database.server.id": "5400",
    "topic.prefix": "shop", "bootstrap.servers": "kafka:9092", "rest.port": "8083"}})


@pytest.fixture(autouse=True)
def no_status_topic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lifecycle, "StatusWriter", Written)


def refused(reply: Future[Any]) -> bool:
    exc = reply.exception(timeout=0)
    return isinstance(exc, CommandRefused) and exc.status == 409 and str(exc) == NOT_LEADING


def test_a_standby_refuses_commands_at_once() -> None:
    control = EngineControl()  # UNASSIGNED until the supervisor says otherwise
    for kind in ("pause", "resume", "stop", "restart", "alter-offsets", "reset-offsets"):
        with pytest.raises(CommandRefused) as caught:
            control.send(kind)  # type: ignore[arg-type]
        assert caught.value.status == 409
    assert control.pending() == []
    control.publish(EngineView(state="RUNNING"))
    assert not control.send("pause").done()


def test_commands_waiting_when_the_lead_is_lost_are_refused() -> None:
    control = EngineControl()
    control.publish(EngineView(state="RUNNING"))
    replies = [control.send("stop"), control.send("pause")]
    control.publish(EngineView(state="UNASSIGNED"))  # stepped down before taking them
    assert all(refused(r) for r in replies)
    assert control.pending() == []


def test_no_command_outlives_a_step_down_however_sends_race_it() -> None:
    """Senders racing the publish of UNASSIGNED: each command is refused, by send or by the
    publish; none stays queued for whatever this instance leads next."""
    control = EngineControl()
    control.publish(EngineView(state="RUNNING"))
    replies: list[Future[Any]] = []
    started = threading.Barrier(5)

    def sender() -> None:
        started.wait()
        for _ in range(2000):
            try:
                replies.append(control.send("pause"))
            except CommandRefused:
                pass

    threads = [threading.Thread(target=sender) for _ in range(4)]
    for thread in threads:
        thread.start()
    started.wait()
    control.publish(EngineView(state="UNASSIGNED"))
    for thread in threads:
        thread.join()
    assert control.pending() == []
    assert all(refused(r) for r in replies)


class SteppedDownEngine:
    """An Engine whose run was asked to stop but lost the lead first."""

    def __init__(self, *_: Any, **__: Any) -> None:
        self.stop_command = None
        self.paused = False
        self.offsets = type("Offsets", (), {"committed": None})()
        self.stopping = threading.Event()

    def run(self) -> int:
        return lifecycle.STEPPED_DOWN


def test_a_stop_the_engine_took_before_stepping_down_is_answered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    control = EngineControl()
    supervisor = lifecycle.Supervisor(CONFIG, control)
    control.publish(EngineView(state="RUNNING"))
    stop = control.send("stop")
    engine = SteppedDownEngine()
    engine.stop_command = control.pending()[0]  # type: ignore[assignment]
    monkeypatch.setattr(lifecycle, "Engine", lambda *a, **k: engine)
    assert supervisor._run_engine()[0] == "RUNNING"  # back to waiting for the lease
    assert refused(stop)  # before: never answered, the client's call timed out after 90 s
