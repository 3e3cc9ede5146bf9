"""The HA lease over a scripted group: an instance that stepped down (fenced) leads again
only through a new assignment after joining again, never on its old membership (#32)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition

from connector.leadership import lease as lease_module
from connector.leadership.lease import Lease
from tests.services import wait_for

TOPIC = "shop-signal"
Callback = Callable[[Any, list[TopicPartition]], None]


class Group:
    """The broker's side: which subscription (if any) the partition is assigned to now."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[str] = []
        self.queued: list[Callable[[], None]] = []  # callbacks the next poll serves
        self.member: FakeConsumer | None = None

    def assign(self) -> None:
        """The group gives the partition to the current subscription."""
        with self.lock:
            member = self.member
            assert member is not None and member.on_assign is not None
            on_assign = member.on_assign
            self.queued.append(lambda: on_assign(member, [TopicPartition(TOPIC, 0)]))


class FakeConsumer:
    def __init__(self, group: Group) -> None:
        self.group = group
        self.on_assign: Callback | None = None
        self.on_revoke: Callback | None = None

    def subscribe(self, topics: list[str], on_assign: Callback, on_revoke: Callback,
                  on_lost: Callback) -> None:
        with self.group.lock:
            self.group.calls.append("subscribe")
            self.on_assign, self.on_revoke = on_assign, on_revoke
            self.group.member = self

    def unsubscribe(self) -> None:
        with self.group.lock:
            self.group.calls.append("unsubscribe")
            self.on_assign = None
            on_revoke = self.on_revoke
            self.group.member = None
        assert on_revoke is not None
        on_revoke(self, [TopicPartition(TOPIC, 0)])

    def poll(self, timeout: float) -> None:
        with self.group.lock:
            queued, self.group.queued = self.group.queued, []
        for callback in queued:
            callback()
        threading.Event().wait(min(timeout, 0.01))

    def pause(self, _partitions: list[TopicPartition]) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.fixture
def group(monkeypatch: pytest.MonkeyPatch) -> Group:
    made = Group()
    monkeypatch.setattr(lease_module, "Consumer", lambda _conf: FakeConsumer(made))
    return made


def test_a_fenced_instance_leads_again_only_after_a_fresh_assignment(group: Group) -> None:
    """Before: `acquire` returned at once on the old membership's assignment, still held in
    the consumer, and the zombie began a newer epoch beside the real leader."""
    lease = Lease({}, "shop-leader", TOPIC, 3000)
    lease.start()
    try:
        group.assign()
        assert lease.acquire(threading.Event())
        stale = group.member
        assert stale is not None and stale.on_assign is not None
        lease.release()  # the engine stepped down: fenced by a newer epoch
        # The old membership's late assignment (served before the leave) does not count.
        on_assign = stale.on_assign
        with group.lock:
            group.queued.append(lambda: on_assign(stale, [TopicPartition(TOPIC, 0)]))
        stopping = threading.Event()
        threading.Timer(0.5, stopping.set).start()
        assert not lease.acquire(stopping)  # not the leader: it waits for the group
        assert not lease.held()
        wait_for(lambda: group.calls == ["subscribe", "unsubscribe", "subscribe"], 2,
                 "the group left and joined again")
        group.assign()  # a fresh assignment to the new membership
        assert lease.acquire(threading.Event()) and lease.held()
    finally:
        lease.close()


def test_a_released_lease_stays_out_of_the_group_until_acquired(group: Group) -> None:
    """A FAILED task gives the lease up: its instance is no member, a standby takes over."""
    lease = Lease({}, "shop-leader", TOPIC, 3000)
    lease.start()
    try:
        group.assign()
        assert lease.acquire(threading.Event())
        lease.release()
        wait_for(lambda: group.calls == ["subscribe", "unsubscribe"], 2, "the group left")
        threading.Event().wait(0.2)
        assert group.calls == ["subscribe", "unsubscribe"] and group.member is None
    finally:
        lease.close()


def test_kip848_members_leave_the_session_and_assignment_to_the_broker() -> None:
    classic = lease_module.membership({}, 10_000)
    assert classic == {"session.timeout.ms": 10_000, "heartbeat.interval.ms": 1666,
                       "partition.assignment.strategy": "cooperative-sticky"}
    assert lease_module.membership({"group.protocol": "consumer"}, 10_000) == {}
    # librdkafka itself refuses the classic settings under the consumer protocol.
    with pytest.raises(KafkaException, match="not supported for `group.protocol=consumer`"):
        Consumer({"bootstrap.servers": "127.0.0.1:9", "group.id": "g",
                  "group.protocol": "consumer", **classic})
    Consumer({"bootstrap.servers": "127.0.0.1:9", "group.id": "g",
              "group.protocol": "consumer"}).close()
