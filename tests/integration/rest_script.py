"""One script of Kafka Connect REST calls, played against a real worker and against gtidmark.

Each step is a request (a body literal, or one derived from what this side answered
before); the runner records its status, the body's shape and the connector's state after
it. A step that changes the state waits until the state reached its target and held it for
a second, on either side, before the next. Shapes keep the values a client acts on (states,
error codes, names, messages) and only the JSON types of what differs by design: worker ids,
traces, versions, and the contents of `config` and `offset` (Debezium's settings and
offsets are not gtidmark's).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.rest_tools import Reply, RestClient

UNKNOWN = "nosuch"
# Compared by JSON type only: what differs by design, and the contents of a config (Debezium's
# settings are not gtidmark's) and of an offset (gtidmark's value has keys of its own).
VARIABLE = {"worker_id", "trace", "version", "commit", "kafka_cluster_id", "offset"}
OPAQUE = {"config"}
SETTLE_DEADLINE = 90.0
SETTLE_HELD = 1.0


@dataclass
class Context:
    """What a side answered so far, for bodies derived from it."""

    name: str
    prefix: str
    replies: dict[str, Reply] = field(default_factory=dict)

    def body(self, label: str) -> Any:
        return self.replies[label].body


Body = Callable[[Context], Any]


@dataclass(frozen=True)
class Step:
    label: str
    method: str
    path: str  # `{name}` is the connector's, `{unknown}` one neither side runs
    body: Any = None  # a JSON literal, or a Body
    raw: bytes | None = None  # sent as is instead of `body`
    settle: str | None = None  # the state this step leads to: RUNNING, PAUSED, STOPPED


@dataclass(frozen=True)
class Record:
    status: int
    shape: Any
    after: tuple[str, tuple[str, ...]]  # connector state, task states


def current_offsets(ctx: Context) -> Any:
    return {"offsets": ctx.body("GET offsets (running)")["offsets"]}


def saved_offsets(ctx: Context) -> Any:
    return {"offsets": ctx.body("GET offsets (stopped)")["offsets"]}


def own_config(ctx: Context) -> Any:
    return dict(ctx.body("GET config"))


def renamed_config(ctx: Context) -> Any:
    return {**own_config(ctx), "name": "another-name"}


def changed_config(ctx: Context) -> Any:
    return {**own_config(ctx), "database.include.list": f"{ctx.prefix},{ctx.prefix}_more"}


def invalid_config(ctx: Context) -> Any:
    return {**own_config(ctx), "database.port": "many"}


def foreign_partition(ctx: Context) -> Any:
    offset = ctx.body("GET offsets (stopped)")["offsets"][0]["offset"]
    return {"offsets": [{"partition": {"server": "another-prefix"}, "offset": offset}]}


def _running() -> list[Step]:
    return [
        Step("GET /", "GET", "/"),
        Step("GET connectors", "GET", "/connectors"),
        Step("GET connectors expand status", "GET", "/connectors?expand=status"),
        Step("GET connectors expand info", "GET", "/connectors?expand=info"),
        Step("GET connectors expand both", "GET", "/connectors?expand=status&expand=info"),
        Step("GET connector", "GET", "/connectors/{name}"),
        Step("GET config", "GET", "/connectors/{name}/config"),
        Step("GET status", "GET", "/connectors/{name}/status"),
        Step("GET tasks", "GET", "/connectors/{name}/tasks"),
        Step("GET task 0 status", "GET", "/connectors/{name}/tasks/0/status"),
        Step("GET task 1 status", "GET", "/connectors/{name}/tasks/1/status"),
        Step("GET offsets (running)", "GET", "/connectors/{name}/offsets"),
        Step("PATCH offsets while running", "PATCH", "/connectors/{name}/offsets",
             current_offsets),
        Step("DELETE offsets while running", "DELETE", "/connectors/{name}/offsets"),
        Step("PATCH offsets not JSON", "PATCH", "/connectors/{name}/offsets",
             raw=b"{not json"),
        Step("PATCH offsets unknown field", "PATCH", "/connectors/{name}/offsets",
             {"key": []}),
        Step("PATCH offsets empty list", "PATCH", "/connectors/{name}/offsets",
             {"offsets": []}),
        Step("PUT config unchanged", "PUT", "/connectors/{name}/config", own_config,
             settle="RUNNING"),
        Step("PUT config name mismatch", "PUT", "/connectors/{name}/config", renamed_config),
        Step("PUT config not JSON", "PUT", "/connectors/{name}/config", raw=b"{not json"),
        Step("PUT config a list", "PUT", "/connectors/{name}/config", ["a"]),
        Step("PUT config invalid value", "PUT", "/connectors/{name}/config", invalid_config),
        Step("PUT config changed", "PUT", "/connectors/{name}/config", changed_config,
             settle="RUNNING"),
        Step("POST restart", "POST", "/connectors/{name}/restart", settle="RUNNING"),
        Step("POST restart includeTasks", "POST", "/connectors/{name}/restart?includeTasks=true",
             settle="RUNNING"),
        Step("POST restart onlyFailed", "POST", "/connectors/{name}/restart?onlyFailed=true",
             settle="RUNNING"),
        Step("POST restart includeTasks onlyFailed", "POST",
             "/connectors/{name}/restart?includeTasks=true&onlyFailed=true", settle="RUNNING"),
        Step("POST task 0 restart", "POST", "/connectors/{name}/tasks/0/restart",
             settle="RUNNING"),
        Step("POST task 1 restart", "POST", "/connectors/{name}/tasks/1/restart"),
        Step("GET tasks-config (removed in 4.0)", "GET", "/connectors/{name}/tasks-config"),
    ]


def _unknown_and_wrong() -> list[Step]:
    steps = [Step(f"{method} {sub or 'connector'} unknown", method,
                  "/connectors/{unknown}" + (f"/{sub}" if sub else ""))
             for method, sub in (("GET", ""), ("GET", "config"), ("GET", "status"),
                                 ("GET", "tasks"), ("GET", "tasks/0/status"),
                                 ("GET", "offsets"), ("PUT", "pause"), ("PUT", "resume"),
                                 ("PUT", "stop"), ("POST", "restart"), ("DELETE", "offsets"))]
    return steps + [
        Step("POST task 0 restart unknown", "POST", "/connectors/{unknown}/tasks/0/restart"),
        Step("POST restart includeTasks unknown", "POST",
             "/connectors/{unknown}/restart?includeTasks=true"),
        Step("PATCH offsets unknown", "PATCH", "/connectors/{unknown}/offsets", current_offsets),
        Step("PUT config unknown, no class", "PUT", "/connectors/{unknown}/config",
             {"name": UNKNOWN}),
        Step("DELETE pause (wrong method)", "DELETE", "/connectors/{name}/pause"),
        Step("GET restart (wrong method)", "GET", "/connectors/{name}/restart"),
        Step("POST offsets (wrong method)", "POST", "/connectors/{name}/offsets", {}),
        Step("GET unknown sub-path", "GET", "/connectors/{name}/nothing"),
        Step("GET unknown path", "GET", "/nothing/here"),
    ]


def _paused_stopped() -> list[Step]:
    return [
        Step("PUT pause", "PUT", "/connectors/{name}/pause", settle="PAUSED"),
        Step("GET status (paused)", "GET", "/connectors/{name}/status"),
        Step("PUT pause again", "PUT", "/connectors/{name}/pause", settle="PAUSED"),
        Step("PATCH offsets while paused", "PATCH", "/connectors/{name}/offsets",
             current_offsets),
        Step("DELETE offsets while paused", "DELETE", "/connectors/{name}/offsets"),
        Step("POST restart includeTasks onlyFailed (paused)", "POST",
             "/connectors/{name}/restart?includeTasks=true&onlyFailed=true", settle="PAUSED"),
        Step("POST restart (paused)", "POST", "/connectors/{name}/restart", settle="PAUSED"),
        Step("PUT resume", "PUT", "/connectors/{name}/resume", settle="RUNNING"),
        Step("PUT resume again", "PUT", "/connectors/{name}/resume", settle="RUNNING"),
        Step("PUT stop", "PUT", "/connectors/{name}/stop", settle="STOPPED"),
        Step("GET status (stopped)", "GET", "/connectors/{name}/status"),
        Step("GET tasks (stopped)", "GET", "/connectors/{name}/tasks"),
        Step("GET connector (stopped)", "GET", "/connectors/{name}"),
        Step("GET connectors expand info (stopped)", "GET", "/connectors?expand=info"),
        Step("GET task 0 status (stopped)", "GET", "/connectors/{name}/tasks/0/status"),
        Step("GET offsets (stopped)", "GET", "/connectors/{name}/offsets"),
        Step("PUT stop again", "PUT", "/connectors/{name}/stop", settle="STOPPED"),
        Step("POST task 0 restart (stopped)", "POST", "/connectors/{name}/tasks/0/restart",
             settle="STOPPED"),
        Step("POST restart (stopped)", "POST", "/connectors/{name}/restart", settle="STOPPED"),
        Step("POST restart includeTasks (stopped)", "POST",
             "/connectors/{name}/restart?includeTasks=true", settle="STOPPED"),
        Step("PATCH offsets empty list (stopped)", "PATCH", "/connectors/{name}/offsets",
             {"offsets": []}),
        Step("PATCH offsets foreign partition", "PATCH", "/connectors/{name}/offsets",
             foreign_partition),
        Step("PATCH offsets (stopped)", "PATCH", "/connectors/{name}/offsets", saved_offsets),
        Step("DELETE offsets (stopped)", "DELETE", "/connectors/{name}/offsets"),
        Step("GET offsets (reset)", "GET", "/connectors/{name}/offsets"),
        Step("PATCH offsets back", "PATCH", "/connectors/{name}/offsets", saved_offsets),
        Step("GET offsets (altered)", "GET", "/connectors/{name}/offsets"),
        Step("PUT pause (stopped)", "PUT", "/connectors/{name}/pause", settle="PAUSED"),
        Step("PUT resume (from stopped, paused)", "PUT", "/connectors/{name}/resume",
             settle="RUNNING"),
    ]


SCRIPT: list[Step] = _running() + _unknown_and_wrong() + _paused_stopped()


def shape(value: Any, key: str | None = None) -> Any:
    """Values a client acts on as they are; what differs by design as its JSON type."""
    if key in VARIABLE:
        return type_name(value)
    if key in OPAQUE:
        return opaque(value)
    if isinstance(value, dict):
        return {k: shape(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(v, key) for v in value]
    return value


def type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def opaque(value: Any) -> Any:
    if isinstance(value, dict):
        kinds = sorted({type_name(v) for v in value.values()})
        return f"object of {'/'.join(kinds) or 'nothing'}"
    return type_name(value)


def state_of(client: RestClient, name: str) -> tuple[str, tuple[str, ...]]:
    body = client.get(f"/connectors/{name}/status").body
    if not isinstance(body, dict) or "connector" not in body:
        return ("no status", ())
    return body["connector"]["state"], tuple(t["state"] for t in body.get("tasks", []))


def settled(state: tuple[str, tuple[str, ...]], target: str) -> bool:
    """The connector and every task in `target`; RUNNING has a task, STOPPED none (a connector
    paused from STOPPED may have none yet: Connect starts its tasks on resume)."""
    connector, tasks = state
    if target == "STOPPED" and tasks:
        return False
    return connector == target and all(t == target for t in tasks) and (
        bool(tasks) or target != "RUNNING")


def settle(client: RestClient, name: str, target: str, what: str) -> None:
    """Until the state is `target` and held it SETTLE_HELD s; AssertionError at the deadline."""
    deadline = time.monotonic() + SETTLE_DEADLINE
    since: float | None = None
    state = state_of(client, name)
    while time.monotonic() < deadline:
        state = state_of(client, name)
        now = time.monotonic()
        if not settled(state, target):
            since = None
        elif since is None:
            since = now
        elif now - since >= SETTLE_HELD:
            return
        time.sleep(0.1)
    raise AssertionError(f"{what}: not {target} after {SETTLE_DEADLINE:.0f}s: {state}")


def only_ours(path: str, body: Any, name: str) -> Any:
    """GET /connectors lists the worker's other connectors too: ours alone is compared."""
    if path.split("?")[0] != "/connectors":
        return body
    if isinstance(body, list):
        return [n for n in body if n == name]
    if isinstance(body, dict):
        return {k: v for k, v in body.items() if k == name}
    return body


def play(client: RestClient, ctx: Context, side: str,
         script: list[Step] = SCRIPT) -> dict[str, Record]:
    """Every step in order against `client`; the records by label."""
    records: dict[str, Record] = {}
    for step in script:
        path = step.path.format(name=ctx.name, unknown=UNKNOWN)
        body = step.body(ctx) if callable(step.body) else step.body
        reply = client.call(step.method, path, body, raw=step.raw)
        ctx.replies[step.label] = reply
        if step.settle is not None:
            settle(client, ctx.name, step.settle, f"{side}: {step.label}")
        body = only_ours(path, reply.body, ctx.name)
        seen = opaque(body) if path.endswith("/config") and step.method == "GET" else shape(body)
        records[step.label] = Record(reply.status, seen, state_of(client, ctx.name))
    return records


def in_message_only(connect: Record, ours: Record) -> bool:
    """Same status, state and body but for the error's or the reply's `message` text."""
    if (connect.status, connect.after) != (ours.status, ours.after):
        return False
    if not isinstance(connect.shape, dict) or not isinstance(ours.shape, dict):
        return False
    return "message" in connect.shape and {**connect.shape, "message": ""} == {
        **ours.shape, "message": ""}


def differences(connect: dict[str, Record], ours: dict[str, Record]) -> dict[str, str]:
    """Label -> both records, for every step where they differ."""
    return {label: (f"\n  Connect:  {json.dumps(connect[label].__dict__, default=str)}"
                    f"\n  gtidmark: {json.dumps(ours[label].__dict__, default=str)}")
            for label in connect if connect[label] != ours[label]}
