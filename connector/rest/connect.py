"""Kafka Connect's REST entities for the one connector this process runs.

Shapes as Apache Kafka's `ConnectorInfo`, `ConnectorStateInfo`, `ConnectorOffsets`,
`ErrorMessage`, `Message` and `ServerInfo` serialize them; the connector has one task (0).
"""

from __future__ import annotations

import socket
from typing import Any

from connector import __version__
from connector.control import EngineView, State
from connector.offsets.value import ConnectorOffsets
from connector.settings.model import ConnectorConfig
from connector.settings.parse import redact

TASK_ID = 0
CONNECTOR_TYPE = "source"


def error(code: int, message: str) -> dict[str, Any]:
    return {"error_code": code, "message": message}


def message(text: str) -> dict[str, Any]:
    return {"message": text}


def server_info(cluster_id: str | None) -> dict[str, Any]:
    return {"version": __version__, "commit": "gtidmark", "kafka_cluster_id": cluster_id}


def _as_connect_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, frozenset | set):  # a list whose order does not matter
        return ",".join(sorted(str(v) for v in value))
    return str(value)


def given_config(config: ConnectorConfig) -> dict[str, str]:
    """The settings as given (Debezium names, string values), secrets included. The groups
    the parser keeps by their own keys (producer./consumer. overrides, column mappers,
    transforms, topic creation, Kafka security) are flattened back to them."""
    given = config.model_dump(by_alias=True, exclude_unset=True)
    out: dict[str, str] = {}
    for key, value in given.items():
        if key in ("producer", "consumer"):
            out.update({f"{key}.{k}": str(v) for k, v in value.items()})
        elif isinstance(value, dict):
            out.update({str(k): str(v) for k, v in value.items()})
        elif value is not None:
            out[key] = _as_connect_string(value)
    return out


def connector_config(config: ConnectorConfig) -> dict[str, str]:
    """GET .../config: the settings as given, secrets redacted."""
    return redact(given_config(config))


def connector_info(config: ConnectorConfig, running: bool = True) -> dict[str, Any]:
    """`running` False (STOPPED): no tasks, as Connect drops a stopped connector's tasks."""
    tasks = [{"connector": config.name, "task": TASK_ID}] if running else []
    return {"name": config.name, "config": connector_config(config), "tasks": tasks,
            "type": CONNECTOR_TYPE}


def task_configs(config: ConnectorConfig, running: bool = True) -> list[dict[str, Any]]:
    if not running:
        return []
    return [{"id": {"connector": config.name, "task": TASK_ID},
             "config": connector_config(config)}]


def worker_id(config: ConnectorConfig) -> str:
    host = config.rest_host if config.rest_host not in ("0.0.0.0", "::") else socket.gethostname()
    return f"{host}:{config.rest_port}"


def _state(state: State, worker: str, trace: str | None) -> dict[str, Any]:
    """Connect 4's AbstractState: `version` is the connector plugin's (KIP-891), ours."""
    out: dict[str, Any] = {"state": state, "worker_id": worker, "version": __version__}
    if trace:
        out["trace"] = trace
    return out


def task_state(config: ConnectorConfig, view: EngineView) -> dict[str, Any] | None:
    """Task 0; None while STOPPED (Connect removes a stopped connector's tasks)."""
    if view.state == "STOPPED":
        return None
    return {"id": TASK_ID, **_state(view.state, worker_id(config), view.trace)}


def state_info(config: ConnectorConfig, view: EngineView) -> dict[str, Any]:
    """A failure is the task's, as when a Connect task's poll throws: the connector runs.

    Tables whose snapshot FAILED are listed under `snapshot` (absent when none: Connect's
    own shape otherwise)."""
    connector_state: State = "RUNNING" if view.state == "FAILED" else view.state
    task = task_state(config, view)
    out = {"name": config.name, "connector": _state(connector_state, worker_id(config), None),
           "tasks": [] if task is None else [task], "type": CONNECTOR_TYPE}
    if view.snapshot.failed:
        out["snapshot"] = {"failed": [{"table": table, "state": "FAILED", "reason": reason}
                                      for table, reason in view.snapshot.failed]}
    return out


def source_partition(config: ConnectorConfig) -> dict[str, Any]:
    return {"server": config.topic_prefix}


def offsets(config: ConnectorConfig, committed: ConnectorOffsets | None) -> dict[str, Any]:
    """KIP-875 `ConnectorOffsets`: one source partition, the committed offset value."""
    if committed is None:
        return {"offsets": []}
    return {"offsets": [{"partition": source_partition(config),
                         "offset": committed.to_json()}]}
