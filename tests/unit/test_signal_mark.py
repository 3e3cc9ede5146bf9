"""A signal is marked in progress (acknowledged) before it is read or acted on, and unmarked
after; a start that finds the mark acts on it again, and skips it in one line once
MAX_ATTEMPTS starts died acting on it (#22, #32). The real
`SignalChannel` over a fake consumer, the offsets topic as the list of records written."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import socket
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError

import signals.channel as channel_module
from connector.leadership.lease import Instance
from connector.offsets.mark import MAX_ATTEMPTS, SignalMark
from connector.offsets.signal_mark import act_on_signals, attempts_that_died
from connector.offsets.value import ConnectorOffsets
from connector.settings.parse import parse_config
from connector.snapshot.actions import ActionDeferred
from signals.channel import ReceivedSignal, SignalChannel
from signals.models import Log

KEY = "shop"
CONFIG = parse_config({"name": "shop-connector", "config": {
    "database.hostname": "replica", "database.user": "cdc", "database.server.id": "5400",
    "topic.prefix": KEY, "bootstrap.servers": "kafka:9092"}})


class Killed(BaseException):
    """The process dying where it stands (SIGKILL, the OOM killer): nothing catches it."""


class _Eof:
    def code(self) -> int:
        return KafkaError._PARTITION_EOF

    def fatal(self) -> bool:
        return False


class _Message:
    def __init__(self, offset: int, record: tuple[bytes | None, bytes | None] | None) -> None:
        self._offset, self._record = offset, record

    def error(self) -> _Eof | None:
        return _Eof() if self._record is None else None

    def offset(self) -> int:
        return self._offset

    def partition(self) -> int:
        return 0

    def key(self) -> bytes | None:
        return None if self._record is None else self._record[0]

    def value(self) -> bytes | None:
        return None if self._record is None else self._record[1]


class FakeConsumer:
    """One partition holding `topic`'s records."""

    def __init__(self, topic: list[tuple[bytes | None, bytes | None]]) -> None:
        self.topic, self.position = topic, 0

    def get_watermark_offsets(self, _tp: Any, timeout: float) -> tuple[int, int]:
        return 0, len(self.topic)

    def assign(self, partitions: list[Any]) -> None:
        self.position = partitions[0].offset

    def consume(self, num_messages: int, timeout: float) -> list[_Message]:
        end = min(len(self.topic), self.position + num_messages)
        out = [_Message(i, self.topic[i]) for i in range(self.position, end)]
        self.position = end
        return out

    def poll(self, timeout: float) -> _Message:
        if self.position >= len(self.topic):
            return _Message(self.position, None)
        self.position += 1
        return _Message(self.position - 1, self.topic[self.position - 1])

    def close(self) -> None:
        pass


class FakeOffsets:
    """What act_on_signals uses of an OffsetStore; `topic` is every record written."""

    def __init__(self, committed: ConnectorOffsets) -> None:
        self.topic: list[ConnectorOffsets] = [committed]
        self.committed: ConnectorOffsets | None = committed
        self.failure: str | None = None

    def seed(self, state: ConnectorOffsets) -> None:
        self.topic.append(state)
        self.committed = state

    def flush(self, timeout: float) -> bool:
        return self.failure is None


@pytest.fixture
def topic(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[bytes | None, bytes | None]]]:
    records: list[tuple[bytes | None, bytes | None]] = []
    monkeypatch.setattr(channel_module, "ensure_signal_topic", lambda *a, **k: None)
    monkeypatch.setattr(channel_module, "Consumer", lambda _settings: FakeConsumer(records))
    yield records


def log_signal(message: str, key: str = KEY) -> tuple[bytes, bytes]:
    return key.encode(), json.dumps({"type": "log", "data": {"message": message}}).encode()


def opened(stored: ConnectorOffsets) -> SignalChannel:
    channel = SignalChannel(CONFIG)
    channel.open(stored.signal_offset, unfinished=stored.signal_in_progress)
    return channel


def messages(acted: list[ReceivedSignal]) -> list[str | None]:
    return [r.signal.message if isinstance(r.signal, Log) else None for r in acted]


def test_each_signal_is_read_and_acted_on_inside_an_acknowledged_mark(
        topic: list[tuple[bytes | None, bytes | None]], monkeypatch: pytest.MonkeyPatch) -> None:
    topic += [log_signal("a"), log_signal("b")]
    start = ConnectorOffsets(gtids="0-1-5", signal_offset=0)
    offsets = FakeOffsets(start)
    channel = opened(start)
    marks_when_read: list[SignalMark | None] = []
    real_parse = channel_module.parse_signal

    def parse(*args: Any) -> Any:
        marks_when_read.append(offsets.topic[-1].signal_in_progress)
        return real_parse(*args)
    monkeypatch.setattr(channel_module, "parse_signal", parse)
    marks_when_acted: list[SignalMark | None] = []
    act_on_signals(channel, offsets,  # type: ignore[arg-type]
                   lambda r: marks_when_acted.append(offsets.topic[-1].signal_in_progress))
    assert marks_when_read == marks_when_acted == [SignalMark(0), SignalMark(1)]
    # The marks change that field alone; the record after the batch is the one before it.
    assert offsets.topic[1:] == [ConnectorOffsets(gtids="0-1-5", signal_offset=0,
                                                  signal_in_progress=SignalMark(n))
                                 for n in (0, 1)] + [start]
    assert channel.next_offset == 2 and channel.unfinished is None


def killing(acted: list[ReceivedSignal]) -> Callable[[ReceivedSignal], None]:
    """An action that dies on the signal "deadly" and notes every other one."""
    def act(received: ReceivedSignal) -> None:
        if messages([received]) == ["deadly"]:
            raise Killed
        acted.append(received)
    return act


def restart(offsets: FakeOffsets) -> tuple[FakeOffsets, SignalChannel]:
    """A new start from the record last written, read back as Kafka holds it."""
    stored = ConnectorOffsets.from_json(json.loads(offsets.topic[-1].to_bytes()))
    return FakeOffsets(stored), opened(stored)


def test_one_kill_while_acting_on_a_signal_does_not_drop_it(
        topic: list[tuple[bytes | None, bytes | None]],
        caplog: pytest.LogCaptureFixture) -> None:
    """Before (#32): the next start skipped it, a snapshot lost for one SIGKILL."""
    topic += [log_signal("a"), log_signal("b")]
    offsets = FakeOffsets(ConnectorOffsets(gtids="0-1-5", signal_offset=0))

    def act(received: ReceivedSignal) -> None:
        if messages([received]) == ["b"]:
            raise Killed
    with pytest.raises(Killed):
        act_on_signals(opened(offsets.topic[-1]), offsets, act)  # type: ignore[arg-type]
    restarted, channel = restart(offsets)
    assert channel.unfinished == SignalMark(1, 1)
    acted: list[ReceivedSignal] = []
    with caplog.at_level(logging.WARNING, logger="signals.channel"):
        act_on_signals(channel, restarted, acted.append)  # type: ignore[arg-type]
    assert messages(acted) == ["a", "b"]
    assert [s.signal_in_progress for s in restarted.topic[1:]] == [
        SignalMark(0, 1), SignalMark(1, 2), SignalMark(1, 1)]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        ("signal topic shop-signal offset 1: the last run ended while acting on it (killed, "
        "crashed or taken over); acting on it again, attempt 2 of 3")]


def test_a_signal_that_kills_every_start_is_skipped_after_max_attempts_in_one_line(
        topic: list[tuple[bytes | None, bytes | None]],
        caplog: pytest.LogCaptureFixture) -> None:
    """A real poison signal: acted on by MAX_ATTEMPTS starts, each killed, then skipped."""
    topic += [log_signal("a"), log_signal("deadly"), log_signal("c")]
    offsets = FakeOffsets(ConnectorOffsets(gtids="0-1-5", signal_offset=0))
    acted: list[ReceivedSignal] = []
    channel = opened(offsets.topic[-1])
    for attempt in range(1, MAX_ATTEMPTS + 1):
        with pytest.raises(Killed):
            act_on_signals(channel, offsets, killing(acted))  # type: ignore[arg-type]
        offsets, channel = restart(offsets)
        assert channel.unfinished == SignalMark(1, attempt)
    # "a" acted on by every start: its effects were never committed.
    assert messages(acted) == ["a"] * MAX_ATTEMPTS
    acted.clear()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="signals.channel"):
        act_on_signals(channel, offsets, killing(acted))  # type: ignore[arg-type]
    assert messages(acted) == ["a", None, "c"]
    assert acted[1].reason is not None and "ended while acting on it" in acted[1].reason
    lines = [r.getMessage() for r in caplog.records if "offset 1" in r.getMessage()]
    assert lines == [("signal topic shop-signal offset 1 skipped: the last 3 runs each ended "
                      "while acting on it (killed or crashed?); it is not acted on again")]
    assert channel.unfinished is None and channel.next_offset == 3
    # The start record keeps the exhausted mark until past it; "deadly" is never marked.
    assert [s.signal_in_progress for s in offsets.topic[1:]] == [
        SignalMark(0, 1), SignalMark(2, 1), SignalMark(1, MAX_ATTEMPTS)]


def test_a_deferred_action_is_retried_in_order_after_a_backoff_and_not_counted(
        topic: list[tuple[bytes | None, bytes | None]],
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Before: a replica error while planning an execute-snapshot skipped the signal."""
    topic += [log_signal("away"), log_signal("after")]
    offsets = FakeOffsets(ConnectorOffsets(gtids="0-1-5", signal_offset=0))
    channel = opened(offsets.topic[-1])
    clock = [1000.0]
    monkeypatch.setattr(channel_module.time, "monotonic", lambda: clock[0])
    failures = [2]
    acted: list[str | None] = []

    def act(received: ReceivedSignal) -> None:
        if messages([received]) == ["away"] and failures[0]:
            failures[0] -= 1
            raise ActionDeferred("signal at offset 0 (log): the replica refused a query "
                                 "(error 2013)")
        acted.extend(messages([received]))
    with caplog.at_level(logging.WARNING, logger="connector.offsets.signal_mark"):
        act_on_signals(channel, offsets, act)  # type: ignore[arg-type]
        assert acted == [] and channel.next_offset == 0
        assert offsets.topic[-1] == offsets.topic[0]  # the mark lifted: nothing counted
        act_on_signals(channel, offsets, act)  # type: ignore[arg-type]
        assert acted == []  # the backoff has not passed
        clock[0] += 1.0
        act_on_signals(channel, offsets, act)  # type: ignore[arg-type]
        assert acted == [] and channel.next_offset == 0
        clock[0] += 1.9
        act_on_signals(channel, offsets, act)  # type: ignore[arg-type]
        assert acted == []
        clock[0] += 0.1
        act_on_signals(channel, offsets, act)  # type: ignore[arg-type]
    assert acted == ["away", "after"] and channel.next_offset == 2
    assert [m.signal_in_progress for m in offsets.topic[1:]] == [
        SignalMark(0), None, SignalMark(0), None, SignalMark(0), SignalMark(1), None]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [
        f"signal at offset 0 (log): the replica refused a query (error 2013); not acted on "
        f"yet, trying again in {s}s (the signals after it wait)" for s in (1, 2)]


def test_a_mark_whose_writer_still_runs_here_lost_its_lease_and_is_not_counted() -> None:
    """A frozen or cut-off leader is alive: the takeover is not a death on the signal."""
    host = socket.gethostname()
    alive = subprocess.Popen(["sleep", "30"])
    try:
        mark = SignalMark(4, 2)
        by_alive = ConnectorOffsets(signal_offset=3, signal_in_progress=mark,
                                    writer=Instance(host, alive.pid, 1.0))
        assert attempts_that_died(by_alive) == SignalMark(4, 1)
        first = dataclasses.replace(by_alive, signal_in_progress=SignalMark(4, 1))
        assert attempts_that_died(first) is None
        elsewhere = dataclasses.replace(by_alive, writer=Instance("other-host", alive.pid, 1.0))
        assert attempts_that_died(elsewhere) == mark
    finally:
        alive.kill()
        alive.wait()
    assert attempts_that_died(by_alive) == mark  # it died
    ours = dataclasses.replace(by_alive, writer=Instance(host, os.getpid(), 1.0))
    assert attempts_that_died(ours) == mark


def test_records_for_another_connector_are_not_marked(
        topic: list[tuple[bytes | None, bytes | None]]) -> None:
    topic += [log_signal("x", key="other"), (None, b"{}")]
    offsets = FakeOffsets(ConnectorOffsets(signal_offset=0))
    acted: list[ReceivedSignal] = []
    act_on_signals(opened(offsets.topic[-1]), offsets, acted.append)  # type: ignore[arg-type]
    assert [r.signal for r in acted] == [None, None] and len(offsets.topic) == 1


def test_no_signal_is_read_when_its_mark_cannot_be_written(
        topic: list[tuple[bytes | None, bytes | None]]) -> None:
    topic += [log_signal("a")]
    offsets = FakeOffsets(ConnectorOffsets(signal_offset=0))
    offsets.failure = "offsets write failed: MSG_TIMED_OUT"
    acted: list[ReceivedSignal] = []
    act_on_signals(opened(offsets.topic[-1]), offsets, acted.append)  # type: ignore[arg-type]
    assert acted == []


def test_a_mark_past_a_recreated_topics_end_is_dropped(
        topic: list[tuple[bytes | None, bytes | None]]) -> None:
    topic += [log_signal("a")]
    channel = opened(ConnectorOffsets(signal_offset=7, signal_in_progress=SignalMark(7)))
    assert channel.next_offset == 0 and channel.unfinished is None


def test_the_mark_is_in_the_record_only_while_set() -> None:
    plain = ConnectorOffsets(gtids="0-1-5", signal_offset=3)
    assert "signal_in_progress" not in plain.to_json()
    marked = ConnectorOffsets(gtids="0-1-5", signal_offset=3,
                              signal_in_progress=SignalMark(4, 2))
    assert (marked.to_json()["signal_in_progress"], marked.to_json()["signal_attempt"]) == (4, 2)
    assert ConnectorOffsets.from_json(json.loads(marked.to_bytes())) == marked
    assert ConnectorOffsets.from_json(json.loads(plain.to_bytes())) == plain


def test_a_mark_written_before_attempts_were_counted_reads_as_attempt_1() -> None:
    old = {"gtids": "0-1-5", "signal_offset": 3, "signal_in_progress": 4, "epoch": 2}
    assert ConnectorOffsets.from_json(old).signal_in_progress == SignalMark(4, 1)
