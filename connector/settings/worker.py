"""A Kafka Connect worker's properties file under a connector's settings, as Connect uses it.

Connect users keep `bootstrap.servers`, the offsets topic, the default converters, the
clients' `producer.*`/`consumer.*` and security settings in `connect-distributed.properties`,
not in the connector JSON. `gtidmark run --worker FILE` reads those keys from there (and the
status topic, where the connector's state is written as Connect writes it); the connector's
own value wins (Connect's connector-level converters and `producer.override.*` win over the
worker's too). Keys of the worker's own cluster (its group, config topic, REST listeners,
plugins) have no meaning here and are skipped.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from connector.settings.errors import ConfigError
from connector.settings.kafka_security import is_security_key

log = logging.getLogger(__name__)

# Worker keys taken as the connector's when it does not set them.
WORKER_KEYS = frozenset({
    "bootstrap.servers", "offset.storage.topic", "offset.storage.partitions",
    "offset.storage.replication.factor", "key.converter", "value.converter",
    "header.converter", "exactly.once.source.support", "status.storage.topic",
    "status.storage.partitions", "status.storage.replication.factor",
})
WORKER_PREFIXES = ("key.converter.", "value.converter.", "producer.", "consumer.")
# The worker's own cluster: nothing here uses them.
WORKER_ONLY = frozenset({
    "group.id", "config.storage.topic", "config.storage.replication.factor",
    "plugin.path", "plugin.discovery", "listeners", "rest.advertised.host.name",
    "rest.advertised.port", "rest.advertised.listener", "offset.flush.interval.ms",
    "offset.flush.timeout.ms", "internal.key.converter", "internal.value.converter",
    "connector.client.config.override.policy", "task.shutdown.graceful.timeout.ms",
    "scheduled.rebalance.max.delay.ms", "session.timeout.ms", "heartbeat.interval.ms",
    "rebalance.timeout.ms", "worker.sync.timeout.ms", "worker.unsync.backoff.ms",
    "client.id", "config.providers", "topic.creation.enable", "metrics.recording.level",
    "metric.reporters", "metrics.num.samples", "metrics.sample.window.ms",
    "admin.listeners", "response.http.headers.config", "access.control.allow.origin",
    "access.control.allow.methods", "inter.worker.key.generation.algorithm",
})
WORKER_ONLY_PREFIXES = ("internal.key.converter.", "internal.value.converter.", "admin.",
                        "listeners.", "rest.extension.", "config.providers.")
OVERRIDE = "producer.override."
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def read_properties(path: str | Path) -> dict[str, str]:
    """A Java properties file (java.util.Properties.load): `key=value`, `key: value` or
    `key value`, `#`/`!` comments, `\\` line continuations and escapes."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: not UTF-8 text; save the file as UTF-8") from None
    out: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:  # an odd number of backslashes: the line goes on
            logical += line[:-1]
            continue
        logical += line
        key, value = _split(logical)
        out[key] = value
        logical = ""
    if logical:
        key, value = _split(logical)
        out[key] = value
    return out


def _split(line: str) -> tuple[str, str]:
    match = re.match(r"((?:\\.|[^\\=:\s])*)\s*[=:]?\s*(.*)$", line, re.DOTALL)
    assert match is not None
    return _unescape(match.group(1)), _unescape(match.group(2))


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        c = m.group(1)
        if c.startswith("u"):
            return chr(int(c[1:], 16))
        return _ESCAPES.get(c, c)
    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", one, text)


def _worker_key(key: str) -> bool:
    return key in WORKER_KEYS or key.startswith(WORKER_PREFIXES) or is_security_key(key)


def under_worker(connector: Mapping[str, Any], worker: Mapping[str, str],
                 source: str) -> dict[str, Any]:
    """The connector's settings with the worker's under them (the connector's win), and the
    connector's `producer.override.*` as its `producer.*`."""
    merged: dict[str, Any] = {}
    for key, value in worker.items():
        if _worker_key(key):
            merged[key] = value
        elif key not in WORKER_ONLY and not key.startswith(WORKER_ONLY_PREFIXES):
            log.warning("config: %s: worker key %r ignored (not one gtidmark reads)", source,
                        key)
    overrides = {}
    for key, value in connector.items():
        if key.startswith(OVERRIDE):
            overrides["producer." + key.removeprefix(OVERRIDE)] = value
        else:
            merged[key] = value
    merged.update(overrides)
    return merged
