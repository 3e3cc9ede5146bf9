"""The commit sequence alone: a real sink and offsets store over stand-in producers."""

from __future__ import annotations

import time
from typing import Any

import pytest

from connector.kafka.sink import Sink
from connector.leadership.fencing import Leadership, SteppedDown
from connector.offsets.commit import Committer
from connector.offsets.store import OffsetStore
from connector.offsets.value import ConnectorOffsets
from connector.settings.parse import parse_config

CONFIG = parse_config({"name": "shop-connector", "config": {
    "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
    "database.hostname": "127.0.0.1", "database.port": "9", "database.user": "cdc",
    "database.password": "x", "database.server.id": "5400", "topic.prefix": "shop",
    "bootstrap.servers": "127.0.0.1:9", "ha.enabled": "false"}})


class Producer:
    """Stands in for both librdkafka producers: keeps each record and its callback."""

    def __init__(self) -> None:
        self.records: list[tuple[bytes | None, Any]] = []

    def __call__(self, topic: str, value: bytes | None, key: bytes | None,
                 on_delivery: Any = None, **_: Any) -> None:
        self.records.append((value, on_delivery))

    produce = __call__

    def poll(self, _timeout: float) -> int:
        return 0


class Lease:
    """A lease the test can take away."""

    group = "shop-connector-leader"
    grace_s = 5.0

    def __init__(self) -> None:
        self.lost = False

    def held(self) -> bool:
        return not self.lost

    def confirmed(self, _beat: float) -> bool:
        return True


class Setup:
    """A committer over a sink and an offsets store whose producers record."""

    def __init__(self) -> None:
        self.sink = Sink({"bootstrap.servers": "127.0.0.1:9", "log_level": "0"})
        self.records = Producer()
        self.sink._produce = self.records  # type: ignore[method-assign]
        self.offsets = OffsetStore(CONFIG)
        self.written = Producer()
        self.offsets._producer = self.written  # type: ignore[assignment]
        self.lease = Lease()
        self.position = "0-1-1"
        leadership = Leadership(self.lease, self.offsets.epoch_holder, "offsets")
        self.committer = Committer(self.offsets, self.sink, leadership, self.state)

    def state(self) -> ConnectorOffsets:
        return ConnectorOffsets(gtids=self.position)


def test_a_state_is_written_only_once_the_records_before_it_are_acked() -> None:
    s = Setup()
    s.sink.send("t", b"k", b"v")
    s.position = "0-1-2"
    assert not s.committer.commit(leading_at=time.monotonic())  # the record is in flight
    assert s.written.records == []
    s.records.records[0][1](None, None)  # Kafka acknowledges it
    assert s.committer.commit(note=False, leading_at=time.monotonic())
    assert s.offsets.committed == ConnectorOffsets(gtids="0-1-2")


def test_without_a_note_nothing_new_is_written() -> None:
    s = Setup()
    assert s.committer.commit()
    s.position = "0-1-5"
    assert not s.committer.commit(note=False)
    assert s.offsets.committed == ConnectorOffsets(gtids="0-1-1")


def test_a_lost_lease_writes_nothing_even_when_acked() -> None:
    s = Setup()
    s.lease.lost = True
    with pytest.raises(SteppedDown):
        s.committer.commit(leading_at=time.monotonic())
    assert s.written.records == [] and s.offsets.committed is None


def test_without_leading_at_leadership_is_not_asked() -> None:
    s = Setup()
    s.lease.lost = True  # the start and the shutdown commit without asking
    assert s.committer.commit()
    assert len(s.written.records) == 1
