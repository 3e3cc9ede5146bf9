"""The sink's acknowledgement bookkeeping: epochs, out-of-order deliveries, marks."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.kafka.sink import Sink, ha_producer


class _Recorded:
    """Stands in for librdkafka's queue: keeps each record's delivery callback."""

    def __init__(self) -> None:
        self.callbacks: list[Any] = []

    def __call__(self, topic: str, value: bytes | None, key: bytes | None,
                 on_delivery: Any) -> None:
        self.callbacks.append(on_delivery)


class _Guard:
    """Stands in for the leadership check the sink asks after a quiet spell."""

    def __init__(self, after: float, check: Callable[[], None]) -> None:
        self.guard_after = after
        self.guard = check


def _sink(guard: _Guard | None = None) -> tuple[Sink, _Recorded]:
    sink = Sink({"bootstrap.servers": "127.0.0.1:9", "log_level": "0"},  # never contacted
                guard=guard)
    recorded = _Recorded()
    sink._produce = recorded  # type: ignore[method-assign]
    return sink, recorded


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.just("send"), st.just("mark"), st.just("check"),
                          st.integers(0, 10_000)), max_size=120))
def test_all_acked_is_exact_at_marks_and_never_early(steps: list[Any]) -> None:
    sink, recorded = _sink()
    delivered: set[int] = set()
    marks: list[int] = []
    for step in steps:
        if step == "send":
            sink.send("t", b"k", b"v")
        elif step == "mark":
            marks.append(sink.mark())
        elif step == "check":
            acked_prefix = next((n for n in range(len(recorded.callbacks))
                                 if n not in delivered), len(recorded.callbacks))
            # Never early: whatever it claims is really acknowledged.
            assert sink.acked_through <= acked_prefix - 1
            for upto in marks:  # exact at marks
                assert sink.all_acked(upto) == (upto <= acked_prefix)
        else:
            waiting = [n for n in range(len(recorded.callbacks)) if n not in delivered]
            if waiting:
                n = waiting[step % len(waiting)]
                delivered.add(n)
                recorded.callbacks[n](None, None)
    assert sink.all_acked(sink.produced) == (len(delivered) == len(recorded.callbacks))


class _Msg:
    def topic(self) -> str:
        return "t"

    def key(self) -> bytes:
        return b'{"schema":{},"payload":{"id":7}}'

    def __len__(self) -> int:
        return 2_000_000


def test_failed_delivery_is_reported() -> None:
    sink, recorded = _sink()
    sink.send("t", b"k", b"v")
    recorded.callbacks[0](KafkaError(KafkaError._MSG_TIMED_OUT, "broker said no"), _Msg())
    assert sink.failure == "delivery to t failed: broker said no"


def test_record_over_the_broker_limit_stops_or_is_skipped_on_request() -> None:
    too_large = KafkaError(KafkaError.MSG_SIZE_TOO_LARGE, "Broker: Message size too large")
    sink, recorded = _sink()
    sink.send("t", b"k", b"v")
    recorded.callbacks[0](too_large, _Msg())
    assert sink.failure is not None
    assert sink.failure.startswith('record for t key {"id":7} is 2000000 bytes, over the broker')
    assert "event.processing.failure.handling.mode=warn" in sink.failure
    for mode in ("warn", "skip"):
        sink = Sink({"bootstrap.servers": "127.0.0.1:9", "log_level": "0"}, mode)
        recorded = _Recorded()
        sink._produce = recorded  # type: ignore[method-assign]
        sink.send("t", b"k", b"v")
        recorded.callbacks[0](too_large, _Msg())
        assert sink.failure is None and sink.all_acked(sink.produced)


def test_guard_runs_before_the_first_record_after_a_quiet_spell() -> None:
    calls: list[int] = []
    sink, recorded = _sink(_Guard(0.05, lambda: calls.append(len(recorded.callbacks))))
    sink.send("t", b"k", b"v")
    sink.send("t", b"k", b"v")
    assert calls == []  # records in a row: no check per record
    time.sleep(0.06)  # as a frozen process sees the time it was stopped
    sink.send("t", b"k", b"v")
    assert calls == [2]  # checked before the third record was queued


def test_guard_that_refuses_queues_nothing() -> None:
    def fenced() -> None:
        raise RuntimeError("fenced")
    sink, recorded = _sink(_Guard(0.0, fenced))
    with pytest.raises(RuntimeError, match="fenced"):
        sink.send("t", b"k", b"v")
    assert recorded.callbacks == [] and sink.produced == 0


def test_ha_producer_bounds_delivery_below_the_lease_unless_the_user_chose() -> None:
    assert ha_producer({"bootstrap.servers": "b"}, 10_000)["message.timeout.ms"] == "5000"
    assert ha_producer({"message.timeout.ms": "0"}, 10_000) == {"message.timeout.ms": "0"}
    assert ha_producer({"delivery.timeout.ms": "9"}, 10_000) == {"delivery.timeout.ms": "9"}
