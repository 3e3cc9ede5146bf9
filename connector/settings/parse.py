"""A Kafka Connect JSON file to a `ConnectorConfig`: key routing, refusals, errors, redaction.

Any problem raises `ConfigError` whose message is one line naming the key and the reason;
the keys of a file are all checked first, and every one refused is a line of `ConfigProblems`.
"""

from __future__ import annotations

import difflib
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from connector.kafka.topic_creation import PREFIX as TOPIC_CREATION
from connector.kafka.topic_creation import TopicCreation
from connector.settings import covered, keys
from connector.settings.errors import ConfigError, ConfigProblems
from connector.settings.kafka_security import is_security_key, librdkafka
from connector.settings.model import ConnectorConfig
from connector.settings.smt import removed_options, unwrap_settings
from connector.settings.worker import read_properties, under_worker

log = logging.getLogger(__name__)

SECRET_MARKERS = ("password", "secret", "sasl.jaas", "ssl.key")
REDACTED = "********"
SHAPE = ('a connector file is {"name": ..., "config": {...}}, as Kafka Connect\'s POST '
         '/connectors takes, or the config map alone with its own "name" key, as GET '
         '/connectors/{name}/config gives it')

PASSTHROUGH_PREFIXES = ("producer.", "consumer.")
# Debezium/Kafka Connect keys that are accepted and have no effect here.
IGNORED_KEYS = {
    "tasks.max",
    "schema.history.internal.kafka.bootstrap.servers",
    "database.history.kafka.bootstrap.servers",
    # Schema history follows the binlog's DDL whatever they say (snapshot_mode.py).
    "snapshot.mode.configuration.based.snapshot.schema",
    "snapshot.mode.configuration.based.snapshot.on.schema.error",
}


def is_secret(key: str) -> bool:
    return any(marker in key.lower() for marker in SECRET_MARKERS)


def redact(settings: dict[str, Any]) -> dict[str, Any]:
    """Copy of `settings` safe to print: every secret-looking value replaced."""
    return {k: (REDACTED if is_secret(k) else v) for k, v in settings.items()}


def _known_aliases() -> set[str]:
    return {f.alias for f in ConnectorConfig.model_fields.values() if f.alias}


def _unknown_key_warning(key: str, known: set[str]) -> None:
    """One warning for a key that changes nothing here, naming a close known key if any."""
    candidates = known | IGNORED_KEYS | keys.SUPPORTED_KEYS | set(keys.DEFAULT_ONLY) | \
        set(covered.ACCEPTED)
    close = difflib.get_close_matches(key, sorted(candidates), n=1, cutoff=0.8)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    log.warning("config: unknown key %r ignored%s", key, hint)


def _name_and_settings(document: Any, source: str) -> tuple[str, dict[str, Any]]:
    """The connector's name and settings from either Kafka Connect shape (SHAPE)."""
    if not isinstance(document, dict):
        raise ConfigError(f"{source}: not a JSON object: {SHAPE}")
    name = document.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{source}: name: required: {SHAPE}")
    if "config" not in document and set(document) != {"name"}:
        return name, document  # the config map alone, its name inside
    raw = document.get("config")
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: config: required, a JSON object of settings: {SHAPE}")
    if raw.get("name", name) != name:  # Kafka Connect refuses this mismatch too
        raise ConfigError(f"{source}: config: its name {raw['name']!r} is not the "
                          f"connector's name {name!r}")
    return name, raw


def parse_config(document: Any, *, source: str = "config",
                 worker: Mapping[str, str] | None = None,
                 worker_source: str = "worker") -> ConnectorConfig:
    """Validate a Kafka Connect style document, under a Connect worker's settings if given
    (worker.py); unknown keys warn once each. Every refused or invalid key is named in one
    ConfigProblems, a line each, so one run shows them all."""
    name, raw = _name_and_settings(document, source)
    if worker is not None:
        raw = under_worker(raw, worker, worker_source)
    known = _known_aliases()
    fields: dict[str, Any] = {"name": name, "producer": {}, "consumer": {},
                              "column_mappers": {}, "transform_settings": {},
                              "topic_creation_settings": {}, "kafka_security": {}}
    problems: list[str] = []
    for key, value in raw.items():
        if key == "name":
            continue
        refused = keys.refusal(key, value, raw)
        if refused is not None:
            problems.append(f"{source}: {key}: {refused}")
        elif key.startswith(keys.COLUMN_MAPPER_PREFIXES):
            fields["column_mappers"][key] = str(value)
        elif key == "transforms" or key.startswith("transforms."):
            fields["transform_settings"][key] = str(value)
        elif key.startswith(TOPIC_CREATION):
            fields["topic_creation_settings"][key] = str(value)
        elif is_security_key(key):
            fields["kafka_security"][key] = str(value)
        elif key.startswith(PASSTHROUGH_PREFIXES):
            group, _, rest = key.partition(".")
            fields[group][rest] = str(value)
        elif key in known:
            fields[key] = value
        elif key in covered.ACCEPTED:
            try:
                covered.accept(key, value)
            except ValueError as exc:
                problems.append(f"{source}: {key}: {exc} (got {str(value)!r})")
        elif key not in IGNORED_KEYS and not keys.changes_records(key):
            _unknown_key_warning(key, known)
    inherited = fields["kafka_security"].get("sasl.mechanism")
    for group, prefix in (("kafka_security", ""), ("producer", "producer."),
                          ("consumer", "consumer.")):
        fields[group], refused_here = librdkafka(fields[group], prefix, inherited)
        problems += [f"{source}: {line}" for line in refused_here]
    try:
        unwrap_settings(fields["transform_settings"])
    except ValueError as exc:
        problems.append(f"{source}: {exc}")
    try:
        TopicCreation.parse(fields["topic_creation_settings"])
    except ValueError as exc:
        problems.append(f"{source}: {exc}")
    try:
        config = ConnectorConfig.model_validate(fields)
    except ValidationError as exc:
        problems += _errors(exc, source)
    if problems:
        raise ConfigProblems(problems)
    for key in removed_options(fields["transform_settings"]):
        log.warning("config: %s is not read by Debezium 3 (removed in 2.x) and is ignored, as "
                    "there: deletes and tombstones follow delete.tombstone.handling.mode", key)
    return config


def _errors(exc: ValidationError, source: str) -> list[str]:
    """One line per invalid setting, naming it."""
    lines = []
    for err in exc.errors():
        loc = err.get("loc", ())
        key = str(loc[0]) if loc else "config"
        message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        if err.get("type") == "missing":
            message = "required setting is missing"
        elif "input" in err and not is_secret(key) and not isinstance(err["input"], dict):
            message = f"{message} (got {err['input']!r})"
        lines.append(f"{source}: {key}: {message}")
    return lines


def load_config(path: str | Path, worker: str | Path | None = None) -> ConnectorConfig:
    """Read and validate a connector JSON file, under a Connect worker's properties file
    if given."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:  # JSON is UTF-8 (RFC 8259); e.g. a Latin-1 password
        raise ConfigError(f"{p}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset "
                          f"{exc.start}); save the file as UTF-8") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{p}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if worker is None:
        return parse_config(document, source=str(p))
    return parse_config(document, source=str(p), worker=read_properties(worker),
                        worker_source=str(worker))
