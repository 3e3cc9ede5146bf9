"""librdkafka's own log lines through Python logging, without its reconnect chatter.

librdkafka retries a broker it cannot reach every 50-100 ms and logs every failure: a
stopped broker gave 580 lines in 30 s on stderr (#24). Here the first failure per broker
and reason is one warning, the repeats go to DEBUG, and the reason is kept for the one
line a command ends with (`connector.kafka.require_kafka`, whose probe logs at DEBUG only).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Any

LOGGER = logging.getLogger("gtidmark.kafka")
REMIND_S = 300.0  # a failure still going on is a warning again after this long

_BROKER = re.compile(r"^(?:\[thrd:[^\]]*\]: )?(?P<broker>\S+?): (?P<text>.*)$")
# "(after 0ms in state CONNECT)", also "(after ..., 1 identical error(s) suppressed)"
_AFTER = re.compile(r"\s*\(after \d+ms in state \w+.*\)\s*$")
_lock = threading.Lock()
_warned: dict[tuple[str, str], float] = {}  # (broker address, reason) -> when warned
_reasons: dict[str, str] = {}  # broker address -> its latest connection failure


def _failure(text: str) -> tuple[str, str] | None:
    """(broker address, reason) of a librdkafka connection-failure line, else None."""
    match = _BROKER.match(text)
    if match is None:
        return None
    address = match["broker"].rsplit("/", 1)[0]
    reason = _AFTER.sub("", match["text"])
    if " failed: " in reason:
        reason = reason.split(" failed: ", 1)[1]
    return address, reason.strip()


class KafkaLog:
    """A librdkafka client's `logger` (confluent-kafka calls `log(level, fmt, fac, name, text)`);
    the clients of a process share the record of failures, so a down broker is one line."""

    def __init__(self, logger: logging.Logger = LOGGER, quiet: bool = False) -> None:
        self._logger = logger
        self._quiet = quiet  # failures noted at DEBUG only: the caller's own line names them

    def __reduce__(self) -> tuple[Any, ...]:
        return (KafkaLog, (self._logger, self._quiet))

    def log(self, level: int, msg: str, *args: Any, **_kwargs: Any) -> None:
        if len(args) != 3:
            self._logger.log(level, msg, *args)
            return
        facility, client, text = (str(a) for a in args)
        if facility == "FAIL":
            failed = _failure(text)
            if failed is not None:
                level = logging.WARNING if _first(failed, self._quiet) else logging.DEBUG
        self._logger.log(level, "%s [%s] %s", facility, client, text)


def _first(failed: tuple[str, str], quiet: bool = False) -> bool:
    """Note a failure; True when it is new (or not warned about for REMIND_S) and not quiet."""
    now = time.monotonic()
    with _lock:
        _reasons.pop(failed[0], None)  # the latest last
        _reasons[failed[0]] = failed[1]
        if quiet or now - _warned.get(failed, -REMIND_S) < REMIND_S:
            return False
        _warned[failed] = now
        return True


def connection_failure(servers: str) -> str | None:
    """The latest connection failure librdkafka logged for one of `servers`
    (a bootstrap.servers list), None if none was logged."""
    addresses = [s.strip().rsplit("://", 1)[-1] for s in servers.split(",") if s.strip()]
    with _lock:
        for address, reason in reversed(list(_reasons.items())):
            if address.rsplit("://", 1)[-1] in addresses:
                return reason
    return None


KAFKA_LOG = KafkaLog()
PROBE_LOG = KafkaLog(quiet=True)  # a reachability probe's client: its error line says why
