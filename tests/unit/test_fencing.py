"""Leadership alone: the lease and the writer epoch decide, no broker or engine needed."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaError, KafkaException

from connector.leadership.fencing import Leadership, SteppedDown
from connector.leadership.lease import Instance


class FakeLease:
    """A lease whose holding and continuity the test sets."""

    group = "shop-leader"
    grace_s = 5.0

    def __init__(self, held: bool = True, confirmed: bool = True) -> None:
        self.is_held = held
        self.is_confirmed = confirmed

    def held(self) -> bool:
        return self.is_held

    def confirmed(self, engine_beat: float) -> bool:
        return self.is_confirmed


class Topic:
    """The offsets topic's newest epoch and writer, as `OffsetStore.epoch_holder` reads it."""

    def __init__(self) -> None:
        self.newest: tuple[int, object] = (0, None)
        self.reads = 0
        self.error: Exception | None = None

    def epoch_holder(self) -> tuple[int, object]:
        self.reads += 1
        if self.error is not None:
            raise self.error
        return self.newest


def leading(lease: FakeLease | None) -> tuple[Leadership, Topic]:
    topic = Topic()
    leadership = Leadership(lease, topic.epoch_holder, "offsets")
    leadership.begin(3)
    topic.newest = (leadership.epoch, leadership.instance)
    return leadership, topic


def test_begin_takes_the_epoch_after_the_newest_written() -> None:
    leadership, _ = leading(None)
    assert leadership.epoch == 4 and isinstance(leadership.instance, Instance)


def test_without_a_lease_nothing_is_checked_and_the_sink_never_asks() -> None:
    leadership, topic = leading(None)
    leadership.check(time.monotonic())
    assert topic.reads == 0 and leadership.guard_after == float("inf")


def test_a_held_and_continuous_lease_reads_no_offsets() -> None:
    leadership, topic = leading(FakeLease())
    leadership.check(time.monotonic())
    leadership.guard()
    assert topic.reads == 0 and leadership.guard_after == 5.0


def test_a_revoked_lease_steps_down() -> None:
    leadership, _ = leading(FakeLease(held=False))
    with pytest.raises(SteppedDown, match="the group shop-leader gave the lease"):
        leadership.check(time.monotonic())


def test_after_a_pause_the_epoch_is_read_and_still_ours() -> None:
    leadership, topic = leading(FakeLease(confirmed=False))
    leadership.check(time.monotonic())
    assert topic.reads == 1


def test_after_a_pause_a_newer_epoch_fences() -> None:
    leadership, topic = leading(FakeLease(confirmed=False))
    topic.newest = (5, Instance("other", 1, 0.0))
    with pytest.raises(SteppedDown, match="fenced: the offsets carry epoch 5"):
        leadership.guard()


def test_the_same_epoch_written_by_another_instance_fences() -> None:
    leadership, topic = leading(None)
    topic.newest = (leadership.epoch, Instance("other", 1, 0.0))
    with pytest.raises(SteppedDown, match="this instance holds epoch 4"):
        leadership.check_epoch()


def test_an_unreadable_offsets_topic_steps_down_with_one_line() -> None:
    leadership, topic = leading(FakeLease(confirmed=False))
    topic.error = KafkaException(KafkaError(KafkaError._TRANSPORT, "broker\n down"))
    with pytest.raises(SteppedDown, match=r"cannot check the writer epoch in offsets \(") as err:
        leadership.check(time.monotonic())
    assert "\n" not in str(err.value)
