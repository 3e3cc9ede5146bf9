"""A status topic that cannot be opened is one warning and no wait at the next change: the
state only informs, it never stops or slows the connector."""

from __future__ import annotations

import logging
import time

import pytest

from connector.kafka import status_topic
from connector.kafka.status_topic import StatusRecord, StatusWriter
from connector.settings.parse import parse_config

CONFIG = parse_config({"name": "c", "config": {
    "database.hostname": "replica", "database.user": "cdc", "database.server.id": "5400",
    "topic.prefix": "shop", "bootstrap.servers": "kafka:9092"}})


class Refusing:
    """A TopicAdmin whose broker does not answer."""

    opened = 0

    def __init__(self, _settings: object) -> None:
        Refusing.opened += 1

    def ensure(self, *_a: object, **_k: object) -> None:
        raise RuntimeError("no broker answered")


def test_a_status_topic_that_cannot_be_opened_warns_once_and_is_not_retried_at_once(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(status_topic, "TopicAdmin", Refusing)
    writer = StatusWriter(CONFIG)
    record = StatusRecord("RUNNING", None, "w", 1)
    with caplog.at_level(logging.WARNING):
        started = time.monotonic()
        for _ in range(3):
            writer.put("status-connector-c", record)
        assert time.monotonic() - started < 1.0
    assert Refusing.opened == 1
    assert [r.getMessage() for r in caplog.records] == [
        ("status topic shop-status: cannot open: no broker answered; `gtidmark status` shows "
        "an older state")]
    assert writer.flush(0.1)  # nothing sent, nothing waiting
