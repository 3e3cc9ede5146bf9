"""Kafka Connect's REST resources for the one connector, plus /metrics, /health, /ready.

`RestApp.handle` is plain request → response, socket-free. Status codes, error bodies and
messages follow Kafka Connect 4.3 (ConnectorsResource, the herder, ConnectExceptionMapper),
checked call for call against a real worker (tests/integration/test_rest_differential.py):
unknown connector or task 404, a body Jackson could not bind 500, an empty offsets list 400,
offsets modified while not STOPPED 400, unknown path 404 and wrong method 405, always as
`{"error_code", "message"}`. PUT .../config is config_put.py's.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from connector.control import (
    NOT_LEADING,
    CommandKind,
    CommandRefused,
    EngineControl,
    EngineView,
    stop_first,
)
from connector.offsets.rest_body import BadBody, BadOffsets, parse_alter_offsets
from connector.rest import connect
from connector.rest.config_put import BadConfig, check_put
from connector.rest.metrics import registry
from connector.settings.model import ConnectorConfig
from signals.models import Signal, SignalRejected, parse_signal
from signals.send import NOT_READ

log = logging.getLogger("gtidmark.rest")

JSON = "application/json"
REQUEST_TIMEOUT = 90.0  # Kafka Connect's REQUEST_TIMEOUT_MS
VIEW_STALE_S = 5.0  # a view older than this means the engine thread is stuck


@dataclass
class Response:
    status: int
    body: Any = None  # JSON-serialisable, or bytes sent as is
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)

    def payload(self) -> bytes:
        if self.body is None:
            return b""
        if isinstance(self.body, bytes):
            return self.body
        return json.dumps(self.body, separators=(",", ":")).encode()


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _not_found() -> HttpError:
    return HttpError(404, "HTTP 404 Not Found")


def _task_path(rest: list[str]) -> tuple[int, str] | None:
    """(id, "status" or "restart") of `tasks/<id>/status|restart`, else None."""
    if len(rest) == 3 and rest[0] == "tasks" and rest[1].isdigit() and \
            rest[2] in ("status", "restart"):
        return int(rest[1]), rest[2]
    return None


class RestApp:
    def __init__(self, config: ConnectorConfig, control: EngineControl,
                 send_signal: Callable[[ConnectorConfig, Signal], int],
                 cluster_id: Callable[[], str | None]) -> None:
        self.config = config
        self.control = control
        self._send_signal = send_signal
        self._cluster_id = cluster_id
        self._registry = registry(config, control.view)

    def handle(self, method: str, path: str, query: dict[str, list[str]],
               body: bytes) -> Response:
        try:
            return self._route(method, [unquote(p) for p in path.split("/") if p], query, body)
        except HttpError as exc:
            return Response(exc.status, connect.error(exc.status, str(exc)))
        except CommandRefused as exc:
            return Response(exc.status, connect.error(exc.status, str(exc)))
        except BadBody as exc:
            return Response(500, connect.error(500, str(exc)))
        except (BadOffsets, BadConfig) as exc:
            return Response(400, connect.error(400, str(exc)))
        except Exception as exc:  # noqa: BLE001 - Connect answers 500 with the message, no trace
            text = " ".join(str(exc).split()) or type(exc).__name__
            log.warning("REST %s %s failed: %s", method, path, text)
            return Response(500, connect.error(500, text))

    # -- routing -----------------------------------------------------------------------

    def _route(self, method: str, parts: list[str], query: dict[str, list[str]],
               body: bytes) -> Response:
        if not parts:
            self._allow(method, "GET")
            return Response(200, connect.server_info(self._cluster_id()))
        head = parts[0]
        if len(parts) == 1 and head in ("metrics", "health", "ready"):
            self._allow(method, "GET")
            return {"metrics": self._metrics, "health": self._health,
                    "ready": self._ready}[head]()
        if head != "connectors":
            raise _not_found()
        if len(parts) == 1:
            self._allow(method, "GET")
            return Response(200, self._list(query))
        return self._connector(method, parts[1], parts[2:], query, body)

    @staticmethod
    def _allow(method: str, *allowed: str) -> None:
        if method not in allowed:
            raise HttpError(405, "HTTP 405 Method Not Allowed")

    def _connector(self, method: str, name: str, rest: list[str],
                   query: dict[str, list[str]], body: bytes) -> Response:
        sub = "/".join(rest)
        task = _task_path(rest)  # tasks/<id>/status|restart, any id
        routes: dict[str, tuple[str, ...]] = {
            "": ("GET",), "config": ("GET", "PUT"), "status": ("GET",), "tasks": ("GET",),
            "pause": ("PUT",), "resume": ("PUT",), "stop": ("PUT",), "restart": ("POST",),
            "offsets": ("GET", "PATCH", "DELETE"), "signals": ("POST",),
        }
        allowed: tuple[str, ...]
        if task is not None:
            sub = f"tasks/{task[0]}/{task[1]}"
            allowed = ("GET",) if task[1] == "status" else ("POST",)
        elif sub in routes:
            allowed = routes[sub]
        else:
            raise _not_found()
        self._allow(method, *allowed)
        if (sub, method) == ("config", "PUT"):  # no 404: Connect would create it
            check_put(self.config, name, body)
            return Response(200, connect.connector_info(
                self.config, self.control.view().state != "STOPPED"))
        alter = parse_alter_offsets(body) if (sub, method) == ("offsets", "PATCH") else None
        if name != self.config.name:
            raise HttpError(404, self._unknown(sub, name, task))
        view = self.control.view()
        if method != "GET" and sub != "signals" and view.state == "UNASSIGNED":
            raise CommandRefused(409, NOT_LEADING)  # a command; signals go to the topic
        config = self.config
        running = view.state != "STOPPED"
        if sub == "":
            return Response(200, connect.connector_info(config, running))
        if sub == "config":
            return Response(200, connect.connector_config(config))
        if sub == "status":
            return Response(200, connect.state_info(config, view))
        if sub == "tasks":
            return Response(200, connect.task_configs(config, running))
        if task is not None:
            return self._task(task, view)
        if sub in ("pause", "resume"):
            self.control.send("pause" if sub == "pause" else "resume")
            return Response(202)
        if sub == "stop":
            self._await(self.control.send("stop"))
            return Response(204)
        if sub == "restart":
            return self._restart(query)
        if sub == "signals":
            return self._signal(body)
        if method == "GET":
            return Response(200, connect.offsets(config, view.committed))
        if view.state != "STOPPED":
            raise HttpError(400, stop_first(name))
        kind: CommandKind = "reset-offsets" if method == "DELETE" else "alter-offsets"
        if alter is not None:
            alter.check(config)
        self._await(self.control.send(kind, None if alter is None else alter.value))
        done = "reset" if method == "DELETE" else "altered"
        return Response(200, connect.message(
            f"The offsets for this connector have been {done} successfully"))

    def _task(self, task: tuple[int, str], view: EngineView) -> Response:
        """Task 0's status or restart; another task, or any of a STOPPED connector (it has
        none), is Connect's 404."""
        task_id, action = task
        name = self.config.name
        state = connect.task_state(self.config, view) if task_id == connect.TASK_ID else None
        if action == "status":
            if state is None:
                raise HttpError(404, f"No status found for task {name}-{task_id}")
            return Response(200, state)
        if state is None:
            raise HttpError(404, f"Unknown task: {name}-{task_id}")
        return self._restart({})

    @staticmethod
    def _unknown(sub: str, name: str, task: tuple[int, str] | None) -> str:
        """Connect's words for each resource of a connector it does not have."""
        if task is not None:
            return f"No status found for task {name}-{task[0]}" if task[1] == "status" \
                else f"Unknown connector: {name}"
        if sub == "status":
            return f"No status found for connector {name}"
        if sub in ("pause", "resume", "stop"):
            return f"Unknown connector {name}"
        if sub == "restart":
            return f"Unknown connector: {name}"
        return f"Connector {name} not found"

    # -- resources ---------------------------------------------------------------------

    def _list(self, query: dict[str, list[str]]) -> Any:
        expand = query.get("expand")
        if not expand:
            return [self.config.name]
        out: dict[str, Any] = {}
        if "status" in expand:
            out["status"] = connect.state_info(self.config, self.control.view())
        if "info" in expand:
            out["info"] = connect.connector_info(self.config, self.control.view().state
                                                 != "STOPPED")
        return {self.config.name: out}

    def _restart(self, query: dict[str, list[str]]) -> Response:
        """Connect's restart: without flags the connector (here its one engine, task
        included: 204); with them 202 and the status, RESTARTING for what restarts, which
        `onlyFailed` limits to what FAILED. A failure is the task's, never the connector's,
        so `onlyFailed` without `includeTasks` restarts nothing, as in Connect."""
        include_tasks = query.get("includeTasks", ["false"])[-1].lower() == "true"
        only_failed = query.get("onlyFailed", ["false"])[-1].lower() == "true"
        if not include_tasks and not only_failed:
            self._await(self.control.send("restart"))
            return Response(204)
        view = self.control.view()
        status = connect.state_info(self.config, view)
        restart_task = include_tasks and (not only_failed or view.state == "FAILED")
        if not only_failed or restart_task:
            self._await(self.control.send("restart"))
        if not only_failed:
            status["connector"]["state"] = "RESTARTING"
        for task in status["tasks"] if restart_task else []:
            task["state"] = "RESTARTING"
            task.pop("trace", None)
        return Response(202, status)

    def _signal(self, body: bytes) -> Response:
        prefix = self.config.topic_prefix
        if not self.config.kafka_signals:
            raise HttpError(409, NOT_READ)
        try:
            signal = parse_signal(prefix.encode(), body, prefix)
        except SignalRejected as exc:
            raise HttpError(400, f"signal rejected: {exc.reason}") from None
        offset = self._send_signal(self.config, signal)
        return Response(202, connect.message(
            f"signal {signal.TYPE} (id {signal.id}) sent to {self.config.signal_kafka_topic} "
            f"at offset {offset}"))

    def _metrics(self) -> Response:
        return Response(200, generate_latest(self._registry), CONTENT_TYPE_LATEST)

    def _health(self) -> Response:
        """Liveness: the process answers and the connector has not FAILED."""
        view = self.control.view()
        if view.state == "FAILED":
            first = (view.trace or "").strip().splitlines()[-1:] or ["failed"]
            return Response(503, {"status": "unhealthy",
                                  "message": f"the connector failed: {first[0]}"})
        return Response(200, {"status": "healthy", "message": f"connector is {view.state}"})

    def _ready(self) -> Response:
        """Readiness: streaming, connected, and caught up within rest.ready.max.lag.ms."""
        view = self.control.view()
        bound = self.config.rest_ready_max_lag_ms
        age = time.monotonic() - view.taken_at
        reason = None
        if view.state != "RUNNING":
            reason = f"connector is {view.state}"
        elif age > VIEW_STALE_S:
            reason = f"the engine has not reported for {age:.0f}s"
        elif not view.connected:
            reason = "the binlog stream is not connected"
        elif not view.queue_empty and view.behind_source_ms > bound:
            reason = f"{view.behind_source_ms} ms behind the source (bound {bound} ms)"
        if reason is not None:
            return Response(503, {"status": "not ready", "message": reason})
        return Response(200, {"status": "ready",
                              "message": f"streaming, {max(view.behind_source_ms, 0)} ms "
                                         "behind the source"})

    @staticmethod
    def _await(reply: Future[Any]) -> Any:
        try:
            return reply.result(REQUEST_TIMEOUT)
        except FutureTimeout:
            raise HttpError(500, "Request timed out") from None
