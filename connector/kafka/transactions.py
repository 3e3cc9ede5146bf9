"""Exactly once into Kafka (KIP-618): the records of a batch and its offsets record in one
Kafka transaction, on one producer whose `transactional.id` every instance of the connector
shares.

`init_transactions` at start aborts whatever an earlier instance left open and fences it at
the broker: a frozen leader that wakes up can no longer commit (its producer is fenced; the
engine steps down). A `read_committed` consumer (librdkafka's default, the Spark job's) sees
each change once: a transaction is committed with the offsets that say it was sent, or it is
aborted and the next run resends it from the offsets before it.

A commit waits for every record of the transaction to be acknowledged, so it runs on a
thread of its own while the engine goes on encoding: the records sent meanwhile are held
and produced, in the next transaction, once the commit ended (one commit in flight at a
time; a bounded hold). Serial, a snapshot spent half its time waiting for commits.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from connector.kafka.sink import DeliveryFailed, SendGuard, Sink

log = logging.getLogger(__name__)

# A transaction open longer is aborted by the broker: a large database transaction is one
# Kafka transaction, so the broker's own limit (transaction.max.timeout.ms, 15 min by
# default) is asked for unless the user sets producer.transaction.timeout.ms.
TRANSACTION_TIMEOUT_MS = 900_000
# Records held while a commit is in flight before `send` waits for it: a bound on memory
# (the producer's own queue is 32 MiB) that leaves a chunk or a batch room to overlap.
HELD_RECORDS = 20_000
HELD_BYTES = 32 * 1024 * 1024
FENCED = {KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH,
          KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}


def transactional_settings(settings: dict[str, Any], transactional_id: str) -> dict[str, Any]:
    return {"transaction.timeout.ms": TRANSACTION_TIMEOUT_MS, **settings,
            "transactional.id": transactional_id, "enable.idempotence": True}


def _nothing() -> None:
    """`on_committed` when the caller needs none."""


class TransactionalSink(Sink):
    """A Sink whose records go out in Kafka transactions that `commit` ends, each with the
    offsets record given to it; a transaction is always open between `open` and `abandon`,
    but while a commit is in flight (records are then held for the next one)."""

    def __init__(self, settings: dict[str, Any], transactional_id: str,
                 failure_mode: str = "fail", guard: SendGuard | None = None) -> None:
        super().__init__(transactional_settings(settings, transactional_id), failure_mode, guard)
        self.transactional_id = transactional_id
        self._committed_through = 0  # `produced` when the last commit began
        self._open = False  # a transaction is begun and neither committed nor aborted
        self._commit_ended: Future[KafkaError | None] | None = None  # the one in flight
        self._on_committed: Callable[[], None] = _nothing
        self._held: list[tuple[str, bytes | None, bytes | None, Any]] = []
        self._held_bytes = 0

    def open(self, timeout: float) -> None:
        """Take the transactional id (fencing any earlier holder) and begin a transaction."""
        try:
            self._producer.init_transactions(timeout)
        except KafkaException as exc:
            raise DeliveryFailed(f"transactional.id {self.transactional_id}: cannot start "
                                 f"transactions: {exc.args[0].str()}") from None
        self._producer.begin_transaction()
        self._open = True
        log.info("exactly once: transactions as %s", self.transactional_id)

    @property
    def in_transaction(self) -> int:
        """Records sent since the last commit began (derived: `send` stays the Sink's own)."""
        return self.produced - self._committed_through

    @property
    def committing(self) -> bool:
        """A commit is still in flight (one that ended is settled first)."""
        self.settle(wait=False)
        return self._commit_ended is not None

    def commit(self, offsets: tuple[str, bytes, bytes, int], timeout: float,
               on_committed: Callable[[], None] = _nothing, wait: bool = False) -> None:
        """Add the offsets record (topic, key, value, partition) and commit in the background,
        `on_committed` once it did (`wait`: before returning). DeliveryFailed (`restart`:
        nothing of it is visible) when a transaction did not commit, here or at a later
        call that learns it."""
        self.settle(wait=True)
        topic, key, value, partition = offsets
        self.mark()  # the records sent from now on count in an epoch the engine thread owns
        try:
            self._producer.produce(topic, value, key, partition=partition)
        except KafkaException as exc:
            self._open = False
            self._failed(exc.args[0])
        self._open = False  # in the commit's hands: it commits, or `settle` aborts it
        self._committed_through = self.produced
        self._on_committed = on_committed
        self._produce = self._hold
        ended: Future[KafkaError | None] = Future()
        self._commit_ended = ended
        threading.Thread(target=self._commit_transaction, args=(ended, timeout),
                         name="kafka-commit", daemon=True).start()
        if wait:
            self.settle(wait=True)

    def _commit_transaction(self, ended: Future[KafkaError | None], timeout: float) -> None:
        """The commit thread: librdkafka's delivery callbacks of the transaction run here."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._producer.commit_transaction(max(1.0, deadline - time.monotonic()))
                ended.set_result(None)
                return
            except KafkaException as exc:
                err = exc.args[0]
                if not err.retriable() or time.monotonic() >= deadline:
                    ended.set_result(err)
                    return

    def _hold(self, topic: str, value: bytes | None, key: bytes | None,
              on_delivery: Any, headers: Any = None) -> None:
        """`produce` while a commit is in flight: kept for the next transaction."""
        self._held.append((topic, key, value, headers))
        self._held_bytes += len(value or b"") + len(key or b"")
        if len(self._held) >= HELD_RECORDS or self._held_bytes >= HELD_BYTES:
            self.settle(wait=True)

    def settle(self, wait: bool) -> None:
        """Learn how the commit in flight ended (waiting for it with `wait`): then begin the
        next transaction with the held records, or raise DeliveryFailed."""
        ended = self._commit_ended
        if ended is None or not (wait or ended.done()):
            return
        err = ended.result()
        self._commit_ended = None
        self._produce = self._producer.produce
        held, self._held, self._held_bytes = self._held, [], 0
        if err is not None:
            self._failed(err)  # the held records are resent from the committed offsets
        self._on_committed()
        self._producer.begin_transaction()
        self._open = True
        for topic, key, value, headers in held:  # still in the epoch they were counted in
            self._hand_over(topic, key, value, headers)
        self._check()

    def poll(self, timeout: float = 0.0) -> None:
        """Delivery callbacks are the commit thread's while it runs."""
        if self.committing:
            self._check()
            return
        super().poll(timeout)

    def flush(self, timeout: float) -> bool:
        self.settle(wait=True)
        return super().flush(timeout)

    def _on_error(self, err: KafkaError) -> None:
        super()._on_error(err)
        if err.fatal() and err.code() in FENCED:
            self.restart = True  # a newer instance holds the id; this one steps down

    def _failed(self, err: KafkaError) -> None:
        reason = f"transaction not committed: {err.str()}"
        if err.code() in FENCED or (err.fatal() and not err.txn_requires_abort()):
            raise DeliveryFailed(f"{reason} (another instance took transactional.id "
                                 f"{self.transactional_id})", restart=True)
        if err.txn_requires_abort():
            with contextlib.suppress(KafkaException):  # fenced meanwhile: nothing to abort
                self._producer.abort_transaction(30)
            # Aborted records are never seen by read_committed consumers: the next run
            # resends them from the offsets committed before them.
            raise DeliveryFailed(f"{reason}; aborted, resent from the committed offsets",
                                 restart=True)
        raise DeliveryFailed(reason)

    def abandon(self) -> None:
        """Abort the open transaction, if any: its records are resent by whoever leads next.
        A commit in flight ends first; a producer fenced or failed has nothing to abort."""
        if self._commit_ended is not None:
            self._commit_ended.result()
            self._commit_ended = None
            self._produce = self._producer.produce
            self._held, self._held_bytes = [], 0
        if self._open:
            self._open = False
            with contextlib.suppress(KafkaException):
                self._producer.abort_transaction(5)
                return
        with contextlib.suppress(KafkaException):
            super().abandon()
