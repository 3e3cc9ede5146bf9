"""PUT /connectors/<name>/config for the one connector this process runs from its file.

Kafka Connect creates (201) or replaces (200) a connector's config and restarts it with the
new one. Here the configuration is the file `gtidmark run` started with: the same settings
again are a 200 with the connector's info, as Connect answers an update (GitOps tools PUT
the config again); a body Connect refuses is refused in Connect's words (500 when it
cannot be bound, 400 for a name mismatch, no connector class, invalid settings); a change,
or another connector, is a 400 naming what differs. Nothing is applied in memory only, which
the next start would silently undo: change the file and restart the process.
"""

from __future__ import annotations

from typing import Any

from connector.offsets.rest_body import BadBody, json_object
from connector.rest.connect import given_config
from connector.settings.errors import ConfigError, ConfigProblems
from connector.settings.model import ConnectorConfig
from connector.settings.parse import REDACTED, is_secret, parse_config, redact

VALIDATE_HINT = ("You can also find the above list of errors at the endpoint "
                 "`/connector-plugins/{connectorType}/config/validate`")


class BadConfig(Exception):
    """Refused with 400, Connect's status for a config it will not take."""


def bind(body: bytes) -> dict[str, str | None]:
    """The body as Jackson binds Map<String, String>: an object whose scalars become text;
    anything else is BadBody (500, as Connect)."""
    doc = json_object(body, "Map<String,String>")
    out: dict[str, str | None] = {}
    for key, value in doc.items():
        if isinstance(value, dict | list):
            raise BadBody(f"Cannot deserialize value of type String from "
                          f"{type(value).__name__} value (key {key!r})")
        out[key] = _text(value)
    return out


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def named(url_name: str, settings: dict[str, str | None]) -> dict[str, str | None]:
    """Connect's checkAndPutConnectorConfigName: the URL's name, the body's if it agrees."""
    included = settings.get("name")
    if included is not None and included != url_name:
        raise BadConfig(f"Connector name configuration ({included}) doesn't match connector "
                        f"name in the URL ({url_name})")
    return {**settings, "name": url_name}


def _java_map(settings: dict[str, str | None]) -> str:
    """A map as Java prints it, secrets redacted (Connect's message would show them)."""
    return "{" + ", ".join(f"{k}={v}" for k, v in redact(dict(settings)).items()) + "}"


def check_put(current: ConnectorConfig, url_name: str, body: bytes) -> None:
    """Returns when the body is the running connector's config; BadBody or BadConfig else."""
    settings = named(url_name, bind(body))
    if settings.get("connector.class") is None:
        raise BadConfig(f"Connector config {_java_map(settings)} contains no connector type")
    if url_name != current.name:
        raise BadConfig(f"this process runs one connector, {current.name}; {url_name} cannot "
                        "be created here (run a gtidmark process with its own file for it)")
    given = given_config(current)
    restored = {k: given[k] if v == REDACTED and is_secret(k) and k in given else v
                for k, v in settings.items()}
    try:
        proposed = parse_config(restored, source="config")
    except ConfigProblems as exc:
        raise BadConfig(_invalid(exc.lines)) from None
    except ConfigError as exc:
        raise BadConfig(_invalid([str(exc)])) from None
    changed = differing(current, proposed)
    if changed:
        raise BadConfig("the configuration of a running gtidmark is its file: change the file "
                        "and restart the process to apply "
                        f"{', '.join(changed)} (nothing was changed)")


def _invalid(lines: list[str]) -> str:
    """Connect's words for a config that fails validation."""
    head = f"Connector configuration is invalid and contains the following {len(lines)} error(s):"
    return "\n".join([head, *lines, VALIDATE_HINT])


def differing(current: ConnectorConfig, proposed: ConnectorConfig) -> list[str]:
    """The settings whose effective values differ (names only: values may be secrets)."""
    ours = current.model_dump(by_alias=True)
    theirs = proposed.model_dump(by_alias=True)
    out: list[str] = []
    for key in sorted(set(ours) | set(theirs)):
        before, after = ours.get(key), theirs.get(key)
        if before == after:
            continue
        if isinstance(before, dict) and isinstance(after, dict):
            prefix = f"{key}." if key in ("producer", "consumer") else ""
            out += [f"{prefix}{k}" for k in sorted(set(before) | set(after))
                    if before.get(k) != after.get(k)]
        else:
            out.append(key)
    return out
