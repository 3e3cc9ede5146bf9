"""This instance's right to write: the HA lease (if any) and the writer epoch it started in.

The engine asks it before every commit and the sink before the first record after a quiet
spell; either way a lost lease or a newer epoch in the offsets raises `SteppedDown`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Protocol

from confluent_kafka import KafkaException

from connector.leadership.lease import Instance

log = logging.getLogger("gtidmark")


class SteppedDown(RuntimeError):
    """Another instance leads now (lease revoked, or a newer epoch in the offsets)."""


class HeldLease(Protocol):
    """What leadership reads of `connector.leadership.lease.Lease`."""

    group: str
    grace_s: float

    def held(self) -> bool: ...

    def confirmed(self, engine_beat: float) -> bool: ...


class Leadership:
    """Checks that this instance still leads: the lease held, and the newest epoch ours."""

    def __init__(self, lease: HeldLease | None,
                 epoch_holder: Callable[[], tuple[int, object]], offsets_topic: str) -> None:
        self.lease = lease
        self._epoch_holder = epoch_holder  # OffsetStore.epoch_holder: the topic's newest
        self._offsets_topic = offsets_topic
        self.epoch = 0
        self.instance: Instance | None = None
        self._beat = time.monotonic()

    @property
    def guard_after(self) -> float:
        """Seconds without a record after which the sink checks again before sending."""
        return self.lease.grace_s if self.lease is not None else float("inf")

    def begin(self, newest_epoch: int) -> None:
        """Take the next epoch: every start writes in a new one (connector/offsets/resume.py)."""
        self.epoch = newest_epoch + 1
        self.instance = Instance.here()

    def check(self, now: float) -> None:
        """Before a commit: still the leader? After a pause, look for a newer epoch first."""
        lease = self.lease
        previous, self._beat = self._beat, now
        if lease is None:
            return
        if not lease.held():
            raise SteppedDown(f"the group {lease.group} gave the lease to another instance")
        if lease.confirmed(previous):
            return
        self.check_epoch()
        self._beat = time.monotonic()  # the check itself must not look like the next pause
        log.info("lease confirmed after a pause of %.1fs (epoch %d still the newest)",
                 now - previous, self.epoch)

    def check_epoch(self) -> None:
        """The offsets topic's newest epoch is still ours, first written by us."""
        try:
            epoch, owner = self._epoch_holder()
        except (KafkaException, TimeoutError, OSError) as exc:
            raise SteppedDown(f"cannot check the writer epoch in {self._offsets_topic} "
                              f"({' '.join(str(exc).split())})") from None
        if (epoch, owner) != (self.epoch, self.instance):
            raise SteppedDown(f"fenced: the offsets carry epoch {epoch} of writer {owner}, "
                              f"this instance holds epoch {self.epoch}")

    def guard(self) -> None:
        """Before the first record after a quiet spell: a frozen leader must not send."""
        self.check(time.monotonic())
