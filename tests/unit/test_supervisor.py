"""Plain `gtidmark run` is the Supervisor without REST: engines scripted, no services."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from connector import supervisor as lifecycle
from connector.config import parse_config

CONFIG = parse_config({"name": "c", "config": {
    "database.hostname": "replica", "database.user": "cdc", "database.server.id": "5400",
    "topic.prefix": "shop", "bootstrap.servers": "kafka:9092"}})


class Lease:
    """Given at once, unless the supervisor is stopping."""

    group = "c-leader"

    def __init__(self) -> None:
        self.acquired = 0

    def acquire(self, stopping: threading.Event) -> bool:
        if stopping.is_set():
            return False
        self.acquired += 1
        return True


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
    supervisor, engines, lease = plain(monkeypatch, lifecycle.STEPPED_DOWN, 1)
    assert supervisor._supervise() == 1
    assert lease.acquired == 2
    assert [(e["retry_start"], e["launch"], e["control"]) for e in engines.built] == [
        (False, "launch", None), (True, None, None)]


def test_a_failed_engine_ends_a_plain_run_with_exit_1_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    supervisor, engines, _ = plain(monkeypatch, 1)
    assert supervisor._supervise() == 1  # no REST: nothing waits in FAILED for a restart
    assert len(engines.built) == 1


def test_a_stop_before_a_step_down_exits_0_without_another_engine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    supervisor, engines, _ = plain(monkeypatch, lifecycle.STEPPED_DOWN)
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
