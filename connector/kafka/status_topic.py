"""The connector's and its task's state in a compacted status topic, as Kafka Connect keeps it
(KafkaStatusBackingStore): `gtidmark status`, and Connect's own tools, read it from Kafka
alone, with no REST port to ask and whichever instance wrote it.

Keys `status-connector-<name>` and `status-task-<name>-0`; values Connect's JSON
`{"state", "trace", "worker_id", "generation", "version"}` (`version`, the plugin's, since
Connect 4.0, KIP-891; older workers ignore it); a null value (tombstone) for a task that
no longer exists (a STOPPED connector's), as Connect writes for a DESTROYED status.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from connector.kafka.partitioner import key_partition
from connector.kafka.reading import read_all_partitions
from connector.kafka.topic_creation import TopicSpec
from connector.kafka.topics import TopicAdmin
from connector.settings.model import ConnectorConfig

log = logging.getLogger(__name__)

TASK_ID = 0
OPEN_TIMEOUT = 10.0
REOPEN_AFTER = 60.0  # a broker that did not answer is not waited for at every transition


def connector_key(name: str) -> str:
    return f"status-connector-{name}"


def task_key(name: str) -> str:
    return f"status-task-{name}-{TASK_ID}"


@dataclass(frozen=True)
class StatusRecord:
    """One value of the status topic (Connect's STATUS_SCHEMA_V0, fields in its order)."""

    state: str
    trace: str | None
    worker_id: str
    generation: int
    version: str | None = None

    def encode(self) -> bytes:
        return json.dumps({"state": self.state, "trace": self.trace,
                           "worker_id": self.worker_id, "generation": self.generation,
                           "version": self.version}, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, raw: bytes) -> StatusRecord | None:
        """None for a value that is not Connect's status shape (Connect logs and skips it)."""
        try:
            doc = json.loads(raw)
            trace, version = doc.get("trace"), doc.get("version")
            return cls(str(doc["state"]), None if trace is None else str(trace),
                       str(doc["worker_id"]), int(doc["generation"]),
                       None if version is None else str(version))
        except (ValueError, KeyError, TypeError):
            return None

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "trace": self.trace, "worker_id": self.worker_id,
                "generation": self.generation, "version": self.version}


def status_spec(config: ConnectorConfig) -> TopicSpec:
    """Compacted, as Connect creates its `status.storage.topic` (5 partitions by default)."""
    return TopicSpec(config.status_storage_partitions, config.status_storage_replication_factor,
                     {"cleanup.policy": "compact"})


class StatusWriter:
    """Puts status records; the topic is created and the producer connected at the first
    put. A status that cannot be written is a warning, never a stop: it only informs."""

    def __init__(self, config: ConnectorConfig) -> None:
        self._config = config
        self.topic = config.status_topic
        self._producer: Producer | None = None
        self._partitions = 0
        self._warned = False
        self._retry_at = 0.0

    def _open(self) -> Producer | None:
        if self._producer is not None:
            return self._producer
        if time.monotonic() < self._retry_at:
            return None
        try:
            admin = TopicAdmin(self._config.producer_settings())
            admin.ensure([self.topic], spec=status_spec(self._config), timeout=OPEN_TIMEOUT)
            self._partitions = admin.partitions_of(self.topic) or 1
        except Exception as exc:  # noqa: BLE001 - the state only informs: never a stop
            self._retry_at = time.monotonic() + REOPEN_AFTER
            self._warn(f"cannot open: {' '.join(str(exc).split())}")
            return None
        settings = {k: v for k, v in self._config.producer_settings().items()
                    if not k.startswith("transactional.")}
        self._producer = Producer({**settings, "enable.idempotence": True, "linger.ms": 0})
        return self._producer

    def _warn(self, why: str) -> None:
        if not self._warned:  # once: it comes back at every transition otherwise
            self._warned = True
            log.warning("status topic %s: %s; `gtidmark status` shows an older state",
                        self.topic, why)

    def _delivered(self, err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            self._warn(f"a state was not written ({err.str()})")

    def put(self, key: str, record: StatusRecord | None) -> None:
        """Send one record (None: a tombstone); delivery goes on in the background."""
        producer = self._open()
        if producer is None:
            return
        raw = key.encode()
        try:
            producer.produce(self.topic, key=raw,
                             value=None if record is None else record.encode(),
                             partition=key_partition(raw, self._partitions),
                             on_delivery=self._delivered)
        except (KafkaException, BufferError) as exc:
            self._warn(f"a state was not written ({exc})")
        producer.poll(0)

    def flush(self, timeout: float) -> bool:
        """True when every record put is acknowledged."""
        producer = self._producer
        return producer is None or producer.flush(timeout) == 0


def read_statuses(config: ConnectorConfig, timeout: float = 30.0
                  ) -> dict[str, StatusRecord | None]:
    """The latest record of the connector's and its task's keys (a key never written is
    absent; a tombstone is None); empty when the topic does not exist."""
    wanted = {connector_key(config.name), task_key(config.name)}
    messages, _ = read_all_partitions(config.consumer_settings(), config.status_topic, timeout)
    latest: dict[str, StatusRecord | None] = {}
    for msg in messages:
        raw_key = msg.key()
        key = raw_key.decode(errors="replace") if isinstance(raw_key, bytes) else raw_key
        value = msg.value()
        if key not in wanted:
            continue
        if value is None:
            latest[key] = None
        elif (record := StatusRecord.decode(value)) is not None:
            latest[key] = record
    return latest
