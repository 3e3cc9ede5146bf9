"""`gtidmark signal ...`: build a Debezium signal, validate it, produce it and wait for the ack.

The message is keyed by `topic.prefix` and written to partition 0 of the signal topic, which
is created with one partition when missing, exactly as the connector's channel expects.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from connector.settings.errors import ConfigError
from connector.settings.model import ConnectorConfig
from signals.channel import (
    PARTITION,
    SignalChannelError,
    ensure_signal_topic,
    signal_client_settings,
)
from signals.models import Signal, SignalRejected, parse_signal, signal_from_value

SEND_TIMEOUT_S = 15.0
NOT_READ = ("signal.enabled.channels: has no kafka, so the connector reads no signal topic "
            "and a signal sent would never be acted on; add kafka to send signals")
EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2
# `gtidmark signal` prints one line; librdkafka's connection chatter goes to DEBUG.
_CLIENT_LOG = logging.getLogger("signals.send.kafka")
# Model locations in a rejection reason, as the CLI option that carries them.
_OPTION_NAMES = (
    ("data.data-collections", "--tables"),
    ("data.additional-conditions", "--condition"),
    ("data.surrogate-key", "--surrogate-key"),
    ("data.chunk-size", "--chunk-size"),
    ("data.chunk-delay-ms", "--chunk-delay-ms"),
    ("data.message", "MESSAGE"),
    ("data: ", ""),
)


class _DebugOnly(logging.LoggerAdapter):  # type: ignore[type-arg]
    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        self.logger.log(logging.DEBUG, msg, *args, **kwargs)


class SignalSendError(RuntimeError):
    """The signal was not acknowledged by Kafka; one line for the operator."""


def split_tables(text: str | None) -> list[str]:
    """`--tables a.b,c.d` as a list (names or regexes; a regex cannot contain a comma here)."""
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def parse_condition(text: str) -> dict[str, str]:
    """`TABLE=FILTER` (split at the first '=') as an additional-conditions item."""
    table, sep, where = text.partition("=")
    if not sep or not table.strip() or not where.strip():
        raise SignalRejected(f"--condition {text!r}: expected TABLE=FILTER, "
                             "e.g. \"app.orders=id < 1000\"")
    return {"data-collection": table.strip(), "filter": where.strip()}


def build_signal(action: str, *, tables: Sequence[str] = (), conditions: Sequence[str] = (),
                 surrogate_key: str | None = None, chunk_size: int | None = None,
                 chunk_delay_ms: int | None = None, message: str | None = None,
                 signal_id: str | None = None) -> Signal:
    """A validated signal for `action`; SignalRejected names the first problem."""
    data: dict[str, object] = {}
    if action == "execute-snapshot":
        data["data-collections"] = list(tables)
        if conditions:
            data["additional-conditions"] = [parse_condition(c) for c in conditions]
        if surrogate_key is not None:
            data["surrogate-key"] = surrogate_key
        data["type"] = "incremental"
    elif action == "stop-snapshot":
        data["data-collections"] = list(tables)
        data["type"] = "incremental"
    elif action == "set-throttle":
        if chunk_size is not None:
            data["chunk-size"] = chunk_size
        if chunk_delay_ms is not None:
            data["chunk-delay-ms"] = chunk_delay_ms
    elif action == "log":
        data["message"] = message or ""
    elif action not in ("pause-snapshot", "resume-snapshot"):
        raise SignalRejected(f"unknown signal action {action!r}")
    return signal_from_value({"type": action, "data": data,
                              "id": signal_id or str(uuid.uuid4())})


def send_signal(config: ConnectorConfig, signal: Signal,
                timeout: float = SEND_TIMEOUT_S) -> int:
    """Produce `signal` to the signal topic and return its offset once Kafka acks it.

    Raises ConfigError when the topic has more than one partition or the connector does not
    read it, SignalChannelError or SignalSendError when Kafka cannot be reached or does not
    ack within `timeout` seconds.
    """
    if not config.kafka_signals:
        raise ConfigError(NOT_READ)
    value = signal.to_json()
    parse_signal(config.topic_prefix.encode(), value, config.topic_prefix)  # what the reader sees
    deadline = time.monotonic() + timeout
    settings = signal_client_settings(config, config.producer_settings())
    quiet = _DebugOnly(_CLIENT_LOG, {})
    ensure_signal_topic(settings, config.signal_kafka_topic, timeout, client_logger=quiet)
    remaining_ms = max(1000, int((deadline - time.monotonic()) * 1000))
    producer = Producer({**settings, "acks": "all", "message.timeout.ms": remaining_ms,
                         "logger": quiet})
    result: list[tuple[KafkaError | None, Message]] = []
    producer.produce(config.signal_kafka_topic, key=config.topic_prefix.encode(), value=value,
                     partition=PARTITION, on_delivery=lambda err, msg: result.append((err, msg)))
    left = producer.flush(max(1.0, deadline - time.monotonic()) + 1.0)
    topic = config.signal_kafka_topic
    if left or not result:
        raise SignalSendError(f"no acknowledgement from Kafka for the signal to {topic} "
                              f"within {timeout:.0f}s")
    err, msg = result[0]
    if err is not None:
        raise SignalSendError(f"signal to {topic} not delivered: {err.str()}")
    offset = msg.offset()
    if offset is None or offset < 0:
        raise SignalSendError(f"signal to {topic} delivered without an offset")
    return int(offset)


def send_from_args(config: ConnectorConfig, args: argparse.Namespace) -> int:
    """The `gtidmark signal` subcommand: exit 0 sent, 2 bad arguments, 1 Kafka failure.

    Usage errors are printed here rather than raised as connector.cli.UsageError: under
    `python -m connector.cli` that class exists twice (`__main__` and `connector.cli`).
    """
    action = str(args.action)
    try:
        signal = build_signal(
            action,
            tables=split_tables(getattr(args, "tables", None)),
            conditions=getattr(args, "condition", None) or (),
            surrogate_key=getattr(args, "surrogate_key", None),
            chunk_size=getattr(args, "chunk_size", None),
            chunk_delay_ms=getattr(args, "chunk_delay_ms", None),
            message=getattr(args, "message", None),
        )
    except SignalRejected as exc:
        print(f"error: signal {action}: {_as_options(action, exc.reason)}", file=sys.stderr)
        return EXIT_USAGE
    try:
        offset = send_signal(config, signal, SEND_TIMEOUT_S)
    except (SignalChannelError, SignalSendError, KafkaException) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_RUNTIME
    print(f"sent {signal.TYPE} (id {signal.id}) to {config.signal_kafka_topic} "
          f"at offset {offset}")
    if not _ever_committed(config):
        print(f"warning: no instance of connector {config.name} has committed offsets to "
              f"{config.offsets_topic} yet: a first start acts on signals sent after its "
              "`gtidmark run` was launched; one sent before is not acted on", file=sys.stderr)
    return EXIT_OK


def _ever_committed(config: ConnectorConfig) -> bool:
    """Whether an instance of the connector ever committed offsets (True if unknown)."""
    from connector.offsets.store import read_resume_point

    try:
        found = read_resume_point(config)
    except Exception:  # noqa: BLE001 - the warning is a courtesy; the signal is sent
        return True
    return found.value is not None or found.epoch > 0


def _as_options(action: str, reason: str) -> str:
    """A model rejection reason in the words of the command line."""
    reason = re.sub(rf"^{re.escape(action)}(?: \(id '[^']*'\))?: ", "", reason)
    reason = re.sub(r"^data\.additional-conditions\[(\d+)\](\.filter|\.data-collection)?",
                    lambda m: f"--condition #{int(m.group(1)) + 1}", reason)
    for location, option in _OPTION_NAMES:
        if reason.startswith(location):
            return option + reason[len(location):]
    return reason
