"""Debezium 3.6 on a Kafka Connect 4.3 worker, producing to the bench's own broker.

The peer Debezium users run: the same connector properties as the embedded run
(bench/debezium.py) less the engine's own (offsets and schema history are the worker's, in
Kafka), records written by the worker's producer (JsonConverter with schemas) to topics
renamed `dbz.` beside gtidmark's. Timed from Kafka as gtidmark is: a topic's high
watermark, i.e. records the broker acknowledged.
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition

from tests.connect_services import ConnectWorker, DebeziumOnConnect
from tests.debezium_runner import STREAMING_STARTED
from tests.services import ServiceError

ROUTE = "dbz."
# gtidmark's producer settings (connector/kafka/sink.py PRODUCER_DEFAULTS) in the Java
# client's words, for the worker's producers: the same acks, batching and compression.
# Connect's own (Worker.baseProducerConfigs: one request in flight, no idempotence; the
# client's 16 KB batches, four 3.5 KB JSON-with-schema records, uncompressed) would compare
# two producers' settings, not the connectors.
PRODUCER = {
    "producer.acks": "all",
    "producer.enable.idempotence": "true",
    "producer.linger.ms": 20,
    "producer.compression.type": "lz4",
    "producer.batch.size": 1_000_000,  # librdkafka's batch.size
    "producer.max.in.flight.requests.per.connection": 5,  # librdkafka's, idempotent
}
# The worker's log layout (tests/connect_services.py LOG4J2): `[yyyy-MM-dd HH:mm:ss,SSS] `.
_STAMPED = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] .*"
                      + re.escape(STREAMING_STARTED), re.MULTILINE)


class ConnectPeer:
    """One Debezium connector on the worker; its topics' counts read from the broker."""

    def __init__(self, worker: ConnectWorker, properties: dict[str, str]) -> None:
        # A name and server id of its own: the embedded peer may use the same replica.
        props = {**properties, "name": f"{properties['name']}-connect",
                 "database.server.id": str(int(properties["database.server.id"]) + 1)}
        self.dbz = DebeziumOnConnect(worker, props, lambda _topic: True, ROUTE)
        self.bootstrap = worker.bootstrap
        self._consumer = Consumer({"bootstrap.servers": worker.bootstrap,
                                   "group.id": "bench-dbz-watermarks",
                                   "enable.auto.commit": False})

    def start(self, ready: str | None = STREAMING_STARTED, timeout: float = 180) -> None:
        """Create the connector, or resume it once stopped; wait for `ready` in its log."""
        self.dbz.start(ready, timeout)

    def pause(self) -> None:
        """Stopped (KIP-875): its offsets committed, the task gone, kept for a resume."""
        self.dbz.worker.stop_connector(self.dbz.name)

    def remove(self) -> None:
        self.dbz.stop()
        self._consumer.close()

    def count(self, topic: str) -> int:
        """Records the broker holds in Debezium's `topic` (named without `dbz.`): the sum of
        its partitions' high watermarks; 0 before the topic exists."""
        name = ROUTE + topic
        meta = self._consumer.list_topics(timeout=10).topics.get(name)
        if meta is None or meta.error is not None:
            return 0
        total = 0
        for partition in meta.partitions:
            try:
                _, high = self._consumer.get_watermark_offsets(
                    TopicPartition(name, partition), timeout=10, cached=False)
            except KafkaException:
                return 0
            total += high
        return int(total)

    def wait_count(self, topic: str, count: int, timeout: float,
                   interval: float = 0.02) -> float:
        """Poll until `topic` holds `count` records; the time.time() it was first seen."""
        deadline = time.monotonic() + timeout
        checked = 0.0
        while time.monotonic() < deadline:
            if self.count(topic) >= count:
                return time.time()
            if time.monotonic() - checked > 1.0:  # a failed task fails the wait at once
                self.dbz.worker.task_states(self.dbz.name)
                checked = time.monotonic()
            time.sleep(interval)
        raise ServiceError(f"timed out after {timeout:.0f}s waiting for {count} records on "
                           f"{ROUTE}{topic} (have {self.count(topic)}); log tail: "
                           f"{self.dbz.engine_log()[-1500:]}")

    def connected_at(self) -> float:
        """The time.time() of the task's last "Connected to binlog at" line in the worker's
        log since the connector was last started (the JVM's clock, to the millisecond)."""
        found = _STAMPED.findall(self.dbz.engine_log())
        if not found:
            raise ServiceError(f"no {STREAMING_STARTED!r} line for {self.dbz.name}")
        return datetime.strptime(found[-1], "%Y-%m-%d %H:%M:%S,%f").timestamp()


class BenchWorker(ConnectWorker):
    """The tests' worker, its producers batching and compressing as gtidmark's do."""

    def settings(self) -> dict[str, Any]:
        return {**super().settings(), **PRODUCER}


def start_worker(base: Path, bootstrap: str) -> ConnectWorker:
    """A distributed worker (group `bench-connect`) on the bench's broker, started."""
    worker = BenchWorker(base, bootstrap, group="bench-connect")
    try:
        worker.start()
    except BaseException:
        worker.stop()
        raise
    print(f"Kafka Connect worker up in {worker.started_in:.1f}s", flush=True)
    return worker
