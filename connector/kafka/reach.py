"""Whether the cluster answers at all: the one line a command exits 1 with when it does not."""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import Consumer, KafkaException

from connector.kafka.client_log import PROBE_LOG, connection_failure

# How long a command waits for the cluster's first answer unless socket.timeout.ms says.
REACH_TIMEOUT_S = 30.0


class KafkaUnreachable(RuntimeError):
    """No broker answered; `str()` is the one line a command exits 1 with."""


def reach_timeout(settings: dict[str, Any]) -> float:
    """The client's socket.timeout.ms in seconds (a test or an impatient user sets it), else
    REACH_TIMEOUT_S."""
    try:
        return max(0.1, float(settings["socket.timeout.ms"]) / 1000)
    except (KeyError, ValueError):
        return REACH_TIMEOUT_S


def require_kafka(settings: dict[str, Any], setting: str = "bootstrap.servers",
                  timeout: float | None = None) -> None:
    """Return once the cluster answers a metadata request; else raise KafkaUnreachable
    naming `setting` (where the address came from) and librdkafka's reason."""
    wait = reach_timeout(settings) if timeout is None else timeout
    servers = str(settings.get("bootstrap.servers", ""))
    consumer = Consumer({**settings, "logger": PROBE_LOG, "group.id": "gtidmark-probe",
                         "enable.auto.commit": False})
    deadline = time.monotonic() + wait
    try:
        while True:
            left = deadline - time.monotonic()
            try:
                consumer.list_topics(timeout=max(0.05, min(1.0, left)))
                return
            except KafkaException as exc:
                consumer.poll(0)  # serves the queued log lines: the first failure shows now
                if left <= 1.0:
                    reason = connection_failure(servers) or (
                        f"no answer within {wait:g}s ({exc.args[0].str()})")
                    raise KafkaUnreachable(f"cannot reach Kafka at {servers} ({setting}): "
                                           f"{reason[:1].lower()}{reason[1:]}") from None
    finally:
        consumer.close()
