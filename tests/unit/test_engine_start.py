"""A start fails in `Engine.run`, never in the constructor: the run loops (plain and REST)
leave a failed start, first or after a step-down, to the Engine alone."""

from __future__ import annotations

import logging
import socket
import threading

import pytest

from connector import engine as engine_module
from connector.engine import STEPPED_DOWN, Engine
from connector.flavours import MARIADB
from connector.settings.model import ConnectorConfig
from connector.settings.parse import parse_config


def closed_port() -> int:
    """A local port nothing listens on: connections are refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def unreachable(**settings: str) -> ConnectorConfig:
    """Neither the replica nor the broker answers."""
    return parse_config({"name": "shop-connector", "config": {
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "database.hostname": "127.0.0.1", "database.port": str(closed_port()),
        "database.user": "cdc", "database.password": "x", "database.server.id": "5400",
        "topic.prefix": "shop", "bootstrap.servers": f"127.0.0.1:{closed_port()}",
        "ha.enabled": "false", **{k.replace("__", "."): v for k, v in settings.items()}}})


def start_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "cannot start" in r.getMessage()]


def test_first_failed_start_is_one_error_line_and_exit_1(
        caplog: pytest.LogCaptureFixture) -> None:
    engine = Engine(unreachable())  # before the change: 30 s of broker metadata, then raised
    with caplog.at_level(logging.WARNING, logger="gtidmark"):
        assert engine.run() == 1
    [line] = start_lines(caplog)
    port = engine.config.port  # the replica is asked first, and named with its settings
    assert line == (f"cannot start: cannot reach the database at 127.0.0.1:{port} "
                    "(database.hostname, database.port): connection refused")
    assert engine.failure is not None and engine.offsets.committed is None


def test_failed_start_after_a_step_down_waits_as_a_standby(
        caplog: pytest.LogCaptureFixture) -> None:
    stopping = threading.Event()
    stopping.set()  # no 5 s wait before the retry
    engine = Engine(unreachable(), stopping=stopping, retry_start=True)
    with caplog.at_level(logging.WARNING, logger="gtidmark"):
        assert engine.run() == STEPPED_DOWN
    [line] = start_lines(caplog)
    assert line.startswith("cannot start yet: cannot reach the database at 127.0.0.1:")
    assert engine.failure is None


def test_a_setting_the_kafka_clients_refuse_fails_the_start_not_the_constructor(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_module, "check_server", lambda _connect: MARIADB)
    engine = Engine(unreachable(producer__acks="banana"))
    with caplog.at_level(logging.WARNING, logger="gtidmark"):
        assert engine.run() == 1
    [line] = start_lines(caplog)
    assert "request.required.acks" in line
