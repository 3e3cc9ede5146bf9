"""A small HTTP client for the connector's REST API, and a running connector with it on."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.connector_tools import ConnectorProcess, connector_document
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.services import MariaDbPair, free_port, wait_for


@dataclass
class Reply:
    status: int
    body: Any  # decoded JSON, the text when not JSON, None when empty
    headers: dict[str, str]


class RestClient:
    def __init__(self, port: int, auth: tuple[str, str] | None = None) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.auth = auth

    def call(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
             auth: tuple[str, str] | None | bool = True, timeout: float = 120) -> Reply:
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        credentials = self.auth if auth is True else auth or None
        if credentials:
            token = base64.b64encode(f"{credentials[0]}:{credentials[1]}".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, payload, headers = response.status, response.read(), response.headers
        except urllib.error.HTTPError as err:
            status, payload, headers = err.code, err.read(), err.headers
        text = payload.decode()
        try:
            decoded: Any = json.loads(text) if text else None
        except json.JSONDecodeError:
            decoded = text
        return Reply(status, decoded, dict(headers))

    def get(self, path: str, **kwargs: Any) -> Reply:
        return self.call("GET", path, **kwargs)

    def wait_state(self, name: str, state: str, timeout: float = 60) -> dict[str, Any]:
        def reached() -> dict[str, Any] | None:
            reply = self.get(f"/connectors/{name}/status")
            tasks = reply.body.get("tasks", []) if isinstance(reply.body, dict) else []
            current = tasks[0]["state"] if tasks else reply.body["connector"]["state"]
            return reply.body if current == state else None
        return wait_for(reached, timeout, f"connector {name} {state}", interval=0.1)


def rest_connector(mariadb: MariaDbPair, broker: Broker, prefix: str, workdir: Path,
                   **settings: Any) -> tuple[ConnectorProcess, RestClient, dict[str, Any]]:
    """`gtidmark run` with the REST server on a free port (not started)."""
    port = free_port()
    doc = connector_document(mariadb, broker, prefix, rest__port=str(port), **settings)
    user = doc["config"].get("rest.basic.auth.user")
    auth = (user, doc["config"]["rest.basic.auth.password"]) if user else None
    return ConnectorProcess(doc, workdir), RestClient(port, auth), doc


def change_events(broker: Broker, topic: str) -> list[dict[str, Any]]:
    """The non-tombstone envelopes (payloads) of a change topic, in order."""
    out = []
    for msg in consume_all(broker.bootstrap, topic):
        if msg.value() is not None:
            doc = json.loads(msg.value())
            out.append(doc.get("payload", doc))
    return out
