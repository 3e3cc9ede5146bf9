"""Exactly once into Kafka (KIP-618): the records of a batch and its offsets record in one
Kafka transaction, on one producer whose `transactional.id` every instance of the connector
shares.

`init_transactions` at start aborts whatever an earlier instance left open and fences it at
the broker: a frozen leader that wakes up can no longer commit (its producer is fenced; the
engine steps down). A `read_committed` consumer (librdkafka's default, the Spark job's) sees
each change once: a transaction is committed with the offsets that say it was sent, or it is
aborted and the next run resends it from the offsets before it.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from connector.kafka.sink import DeliveryFailed, SendGuard, Sink

log = logging.getLogger(__name__)

# A transaction open longer is aborted by the broker: a large database transaction is one
# Kafka transaction, so the broker's own limit (transaction.max.timeout.ms, 15 min by
# default) is asked for unless the user sets producer.transaction.timeout.ms.
TRANSACTION_TIMEOUT_MS = 900_000
FENCED = {KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH,
          KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}


def transactional_settings(settings: dict[str, Any], transactional_id: str) -> dict[str, Any]:
    return {"transaction.timeout.ms": TRANSACTION_TIMEOUT_MS, **settings,
            "transactional.id": transactional_id, "enable.idempotence": True}


class TransactionalSink(Sink):
    """A Sink whose records go out in Kafka transactions that `commit` ends, each with the
    offsets record given to it; a transaction is always open between `open` and `abandon`."""

    def __init__(self, settings: dict[str, Any], transactional_id: str,
                 failure_mode: str = "fail", guard: SendGuard | None = None) -> None:
        super().__init__(transactional_settings(settings, transactional_id), failure_mode, guard)
        self.transactional_id = transactional_id
        self._committed_through = 0  # `produced` at the last commit
        self._open = False  # a transaction is begun and neither committed nor aborted

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
        """Records sent since the last commit (derived: `send` stays the Sink's own)."""
        return self.produced - self._committed_through

    def commit(self, offsets: tuple[str, bytes, bytes, int], timeout: float) -> None:
        """Add the offsets record (topic, key, value, partition) and commit; DeliveryFailed
        (`restart`: nothing of it is visible) if the transaction did not commit."""
        topic, key, value, partition = offsets
        producer = self._producer
        deadline = time.monotonic() + timeout
        try:
            producer.produce(topic, value, key, partition=partition)
            while True:
                try:
                    producer.commit_transaction(max(1.0, deadline - time.monotonic()))
                    break
                except KafkaException as exc:
                    err = exc.args[0]
                    if not err.retriable() or time.monotonic() >= deadline:
                        raise
        except KafkaException as exc:
            self._open = False  # committed by nobody: aborted below, or the producer is dead
            self._failed(exc.args[0])
        self._committed_through = self.produced
        producer.begin_transaction()
        self._check()

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
        A producer already fenced or failed has nothing left to abort."""
        if self._open:
            self._open = False
            with contextlib.suppress(KafkaException):
                self._producer.abort_transaction(5)
                return
        with contextlib.suppress(KafkaException):
            super().abandon()
