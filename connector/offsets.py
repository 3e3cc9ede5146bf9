"""Connector offsets in a compacted Kafka topic, in Kafka Connect's shape.

Key: ["<name>", {"server": "<topic.prefix>"}]. Value: the streaming position (gtids, file,
pos, server_id, ts_sec), the incremental-snapshot progress and the signal-topic offset,
all in one record so that they move together. A record is written only after every
change event produced before it has been acknowledged (see `Checkpoints`).
"""

from __future__ import annotations

import json
import logging
from collections import deque
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Producer

from connector.config import ConnectorConfig
from connector.kafka import TopicAdmin, read_to_end
from connector.sink import Sink

log = logging.getLogger(__name__)


def offset_key(config: ConnectorConfig) -> bytes:
    return json.dumps([config.name, {"server": config.topic_prefix}],
                      separators=(",", ":")).encode()


@dataclass(slots=True)
class Checkpoint:
    produced: int  # records handed to the sink before this state
    state: dict[str, Any]


class OffsetStore:
    def __init__(self, config: ConnectorConfig, admin: TopicAdmin) -> None:
        self._config = config
        self._topic = config.offsets_topic
        self._key = offset_key(config)
        self._settings = config.producer_settings()
        admin.ensure([self._topic], config={"cleanup.policy": "compact"})
        self._producer = Producer({**self._settings, "enable.idempotence": True,
                                   "message.timeout.ms": 0, "linger.ms": 0})
        self._pending: deque[Checkpoint] = deque()
        self.committed: dict[str, Any] | None = None
        self.failure: str | None = None

    def load(self) -> dict[str, Any] | None:
        """The last committed value for this connector, or None on first start."""
        found: dict[str, Any] | None = None
        for msg in read_to_end(self._config.consumer_settings(), self._topic):
            if msg.key() != self._key:
                continue
            raw = msg.value()
            found = None if raw is None else json.loads(raw)
        self.committed = found
        return found

    def checkpoint(self, produced: int, state: dict[str, Any]) -> None:
        """Remember `state`; it is committed once the first `produced` records are acked."""
        if self._pending and self._pending[-1].produced == produced:
            self._pending[-1] = Checkpoint(produced, state)
        else:
            self._pending.append(Checkpoint(produced, state))

    def commit_acked(self, sink: Sink) -> bool:
        """Write the newest checkpoint whose records are all acknowledged; True if written."""
        pending = self._pending
        if not pending or not sink.all_acked(pending[0].produced):
            return False
        ready = pending.popleft()
        while pending and sink.all_acked(pending[0].produced):
            ready = pending.popleft()
        self._producer.poll(0)
        if ready.state == self.committed:
            return False
        self._write(ready.state)
        return True

    def _write(self, state: dict[str, Any]) -> None:
        def delivered(err: Any, _msg: Any) -> None:
            if err is not None:
                self.failure = f"offset commit failed: {err}"

        self._producer.produce(self._topic, json.dumps(state, separators=(",", ":")).encode(),
                               self._key, on_delivery=delivered)
        self._producer.poll(0)
        self.committed = state

    def flush(self, timeout: float) -> bool:
        return self._producer.flush(timeout) == 0 and self.failure is None
