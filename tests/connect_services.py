"""A Kafka Connect 4.3 distributed worker with Debezium's MySQL connector, for the tests.

`make setup` copies the worker's jars to `.local/maven/connect/` and Debezium's plugin to
`.local/maven/connect-plugins/debezium-mysql/` (`scripts/maven-jars`): the plugin directory
is on the worker's `plugin.path`, apart from the worker's classpath, as Connect users install
Debezium. A `ConnectWorker` runs `ConnectDistributed` against the suite's broker on a free
REST port, with config, offsets and status topics of its own; its log stays in its directory.
The worker is 4.3.1, not 4.4: Debezium 3.6 fails on 4.4 (scripts/maven/connect.xml says why).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.debezium_runner import STREAMING_STARTED
from tests.kafka_services import JVM_OPTIONS, ROOT, java
from tests.kafka_tools import consume_all, json_records, list_topics
from tests.rest_tools import Reply, RestClient
from tests.services import ServiceError, free_port, stop_process, wait_for

MYSQL_CONNECTOR = "io.debezium.connector.mysql.MySqlConnector"
LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p [%t] %X{{connector.context}}%m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = org.apache.kafka
logger.kafka.level = WARN
logger.connect.name = org.apache.kafka.connect
logger.connect.level = INFO
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
"""


def connect_libs() -> tuple[Path, Path]:
    """The worker's classpath directory and its plugin.path: $GTIDMARK_CONNECT_LIBS, else
    what `make setup` fetched (plugins in `connect-plugins` beside it)."""
    libs = Path(os.environ.get("GTIDMARK_CONNECT_LIBS", ROOT / ".local" / "maven" / "connect"))
    plugins = libs.parent / "connect-plugins"
    if not any(libs.glob("connect-runtime-*.jar")) or \
            not any(plugins.glob("debezium-mysql/debezium-connector-mysql-*.jar")):
        raise ServiceError(f"Kafka Connect's or Debezium's jars are missing in {libs} or "
                           f"{plugins} (run `make setup`)")
    return libs, plugins


@dataclass
class ConnectWorker:
    """One `ConnectDistributed` worker (a group of its own) on `bootstrap`."""

    base: Path
    bootstrap: str
    group: str = "gm-connect"
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    started_in: float = 0.0  # seconds from the JVM's start to the REST API and the plugin

    @property
    def home(self) -> Path:
        return self.base / "connect"

    @property
    def log(self) -> Path:
        return self.home / "connect.log"

    @property
    def offsets_topic(self) -> str:
        return f"{self.group}-offsets"

    @property
    def rest(self) -> RestClient:
        return RestClient(self.port)

    def settings(self) -> dict[str, Any]:
        """connect-distributed.properties as Kafka ships it, for a one-broker cluster."""
        _, plugins = connect_libs()
        return {
            "bootstrap.servers": self.bootstrap,
            "group.id": self.group,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "key.converter.schemas.enable": "true",
            "value.converter.schemas.enable": "true",
            "offset.storage.topic": self.offsets_topic,
            "offset.storage.replication.factor": 1,
            "config.storage.topic": f"{self.group}-configs",
            "config.storage.replication.factor": 1,
            "status.storage.topic": f"{self.group}-status",
            "status.storage.replication.factor": 1,
            # Offsets flushed every 100 ms (60 s by default): a test stops a connector
            # mid-stream and reads where it was.
            "offset.flush.interval.ms": 100,
            "listeners": f"http://127.0.0.1:{self.port}",
            "plugin.path": plugins,
            # Debezium's jars carry ServiceLoader manifests: no reflective scan of every
            # class on the path (about 10 s of the start here).
            "plugin.discovery": "service_load",
            # No delay before a stopped task's work is handed out again (one worker).
            "scheduled.rebalance.max.delay.ms": 0,
        }

    def start(self, timeout: float = 180) -> None:
        libs, _ = connect_libs()
        self.home.mkdir(parents=True, exist_ok=True)
        props = self.home / "connect-distributed.properties"
        props.write_text("".join(f"{k}={v}\n" for k, v in self.settings().items()))
        (self.home / "log4j2.properties").write_text(LOG4J2.format(log=self.log))
        began = time.monotonic()
        with open(self.home / "stdout.log", "ab") as out:
            self.proc = subprocess.Popen(
                [java(), *JVM_OPTIONS,
                 f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}",
                 "-cp", f"{libs}/*", "org.apache.kafka.connect.cli.ConnectDistributed",
                 str(props)], stdout=out, stderr=subprocess.STDOUT)
        wait_for(self._ready, timeout, f"Kafka Connect's REST API on {self.port} with "
                 "Debezium's MySQL connector", interval=0.2)
        self.started_in = time.monotonic() - began

    def alive(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            tail = self.log.read_text(errors="replace")[-1500:] if self.log.exists() else ""
            raise ServiceError(f"Kafka Connect exited with {self.proc.returncode}; log "
                               f"{self.log}: {tail}")

    def _ready(self) -> bool:
        self.alive()
        reply = self.rest.get("/connector-plugins", timeout=5)
        # 200 once the worker joined its group; the plugin shows it was found on the path.
        return reply.status == 200 and any(p["class"] == MYSQL_CONNECTOR for p in reply.body)

    def stop(self) -> None:
        stop_process(self.proc, timeout=30)

    # ------------------------------------------------------------------ connectors

    def create(self, name: str, config: dict[str, Any]) -> None:
        """PUT the connector's config (created, or replaced) and wait until its task runs."""
        reply = self.rest.call("PUT", f"/connectors/{name}/config",
                               {k: str(v) for k, v in config.items()})
        if reply.status not in (200, 201):
            raise ServiceError(f"Kafka Connect refused {name}: {reply.status} {reply.body}")
        self.wait_running(name)

    def task_states(self, name: str) -> list[str]:
        """Its tasks' states; a FAILED task fails the caller at once with its trace."""
        self.alive()
        body = self.rest.get(f"/connectors/{name}/status").body
        tasks = body.get("tasks", []) if isinstance(body, dict) else []
        failed = [t for t in tasks if t["state"] == "FAILED"]
        if failed:
            raise AssertionError(f"{name}'s task failed: {failed[0].get('trace', '')[:3000]}")
        return [str(t["state"]) for t in tasks]

    def wait_running(self, name: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while (states := self.task_states(name)) != ["RUNNING"] * max(1, len(states)):
            if time.monotonic() > deadline:
                raise ServiceError(f"connector {name}'s task not RUNNING in {timeout:.0f}s: "
                                   f"{states}")
            time.sleep(0.2)

    def stop_connector(self, name: str, timeout: float = 60) -> None:
        """PUT .../stop: the task stops, its last offsets are committed (KIP-875)."""
        self.call_ok("PUT", f"/connectors/{name}/stop")
        wait_for(lambda: self.rest.get(f"/connectors/{name}/status").body["connector"][
            "state"] == "STOPPED", timeout, f"connector {name} STOPPED", interval=0.2)

    def delete(self, name: str) -> None:
        reply = self.rest.call("DELETE", f"/connectors/{name}")
        if reply.status not in (204, 404):
            raise ServiceError(f"DELETE {name}: {reply.status} {reply.body}")
        wait_for(lambda: self.rest.get(f"/connectors/{name}").status == 404, 60,
                 f"connector {name} deleted", interval=0.2)

    def call_ok(self, method: str, path: str, body: Any = None) -> Reply:
        reply = self.rest.call(method, path, body)
        if reply.status >= 300:
            raise ServiceError(f"{method} {path}: {reply.status} {reply.body}")
        return reply

    def offsets(self, name: str) -> list[dict[str, Any]]:
        """GET .../offsets: the source partitions and offsets the worker holds for `name`."""
        body: list[dict[str, Any]] = self.call_ok("GET", f"/connectors/{name}/offsets").body[
            "offsets"]
        return body

    def offsets_records(self) -> list[tuple[Any, Any]]:
        """The offsets topic as it is: (key, value) JSON texts, tombstones as None."""
        return [(m.key().decode() if m.key() else None,
                 m.value().decode() if m.value() else None)
                for m in consume_all(self.bootstrap, self.offsets_topic)]


# Embedded-engine settings (tests/debezium_runner.py) that are the worker's in Connect.
ENGINE_ONLY = ("offset.storage", "offset.storage.file.filename", "offset.flush.interval.ms",
               "converter.schemas.enable", "key.converter.schemas.enable",
               "value.converter.schemas.enable", "schema.history.internal.file.filename")


def _own_converter(key: str, properties: dict[str, str]) -> bool:
    """`key.converter.schemas.enable` (or value's) given with the connector's own
    `key.converter`: a connector-level override Connect applies, not an engine default."""
    side = key.partition(".converter.")[0]
    return key.endswith(".converter.schemas.enable") and f"{side}.converter" in properties


class DebeziumOnConnect:
    """Debezium's MySQL connector on the worker, its records read back from Kafka.

    gtidmark writes the same topic names on the same broker, so Connect's RegexRouter, last
    in the chain, puts Debezium's under `dbz.` unless told otherwise (the records themselves
    unchanged); its schema
    history is Kafka's (`schema.history.internal.kafka.topic`), as Connect users run it.
    The methods are tests/debezium_runner.py's DebeziumProcess's, for the same callers.
    """

    def __init__(self, worker: ConnectWorker, properties: dict[str, str],
                 topics: Callable[[str], bool], route: str = "dbz.") -> None:
        """`route` "" leaves the topic names as Debezium makes them (a migration's)."""
        self.worker = worker
        self.route = route
        self.name = properties["name"]
        self.topics = topics  # which of Debezium's topics (names without `dbz.`) to read
        self.history_topic = f"{properties['topic.prefix']}-debezium-schema-history"
        config = {k: v for k, v in properties.items()
                  if k != "name" and (k not in ENGINE_ONLY or _own_converter(k, properties))}
        config.update({
            "schema.history.internal": "io.debezium.storage.kafka.history.KafkaSchemaHistory",
            "schema.history.internal.kafka.topic": self.history_topic,
            "schema.history.internal.kafka.bootstrap.servers": worker.bootstrap,
        })
        self.connector_json = dict(config)  # as a Connect user has it: no test routing
        if route:
            chain = [t for t in config.get("transforms", "").split(",") if t]
            config.update({
                "transforms": ",".join([*chain, "dbzroute"]),
                "transforms.dbzroute.type": "org.apache.kafka.connect.transforms.RegexRouter",
                "transforms.dbzroute.regex": "(.*)",
                "transforms.dbzroute.replacement": f"{route}$1",
            })
        self.config = config
        self.log_from = 0

    def create_stopped(self) -> None:
        """POST the connector in the STOPPED state (KIP-980): the worker reads its offsets
        (GET .../offsets), no task runs."""
        self.worker.call_ok("POST", "/connectors", {"name": self.name, "config": self.config,
                                                    "initial_state": "STOPPED"})
        wait_for(lambda: self.worker.rest.get(f"/connectors/{self.name}/status").body[
            "connector"]["state"] == "STOPPED", 60, f"connector {self.name} STOPPED", 0.2)

    def start(self, ready: str | None = STREAMING_STARTED, timeout: float = 180) -> None:
        """Create the connector (or resume it when it was created stopped); wait until the
        worker's log shows `ready` for it."""
        self.log_from = self.worker.log.stat().st_size if self.worker.log.exists() else 0
        if self.worker.rest.get(f"/connectors/{self.name}").status == 200:
            self.worker.call_ok("PUT", f"/connectors/{self.name}/resume")
            self.worker.wait_running(self.name)
        else:
            self.worker.create(self.name, self.config)
        if ready is not None:
            self.wait_log(ready, timeout)

    def engine_log(self) -> str:
        """The worker's log since this connector was created."""
        with open(self.worker.log, "rb") as log:
            log.seek(self.log_from)
            return log.read().decode(errors="replace")

    def _wait(self, check: Callable[[], Any], timeout: float, what: str) -> Any:
        """Poll `check` until truthy; a failed task fails at once (not at the deadline)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._alive()
            result = check()
            if result:
                return result
            time.sleep(0.2)
        raise ServiceError(f"timed out after {timeout:.0f}s waiting for {what}; log tail: "
                           f"{self.engine_log()[-1500:]}")

    def _alive(self) -> None:
        self.worker.task_states(self.name)

    def wait_log(self, text: str, timeout: float = 120, count: int = 1) -> None:
        self._wait(lambda: self.engine_log().count(text) >= count, timeout,
                   f"Debezium log line {text!r}" + (f" {count} times" if count > 1 else ""))

    def records(self, only: Collection[str] | None = None) -> list[dict[str, Any]]:
        """Debezium's records so far; `only` these topics (names without the route)."""
        names = sorted(t for t in list_topics(self.worker.bootstrap)
                       if t.startswith(self.route) and self.topics(t.removeprefix(self.route))
                       and (only is None or t.removeprefix(self.route) in only))
        return json_records(self.worker.bootstrap, names, strip=self.route)

    def wait_records(self, predicate: Callable[[list[dict[str, Any]]], bool],
                     timeout: float = 120, what: str = "Debezium records",
                     only: Collection[str] | None = None) -> list[Any]:
        def check() -> list[dict[str, Any]] | None:
            found = self.records(only)
            return found if predicate(found) else None
        result: list[dict[str, Any]] = self._wait(check, timeout, what)
        return result

    def history(self) -> list[dict[str, Any]]:
        """Debezium's schema history records, in order."""
        return [json.loads(m.value()) for m in consume_all(self.worker.bootstrap,
                                                            self.history_topic)]

    def stop(self) -> int:
        """Stop the connector (its offsets committed) and remove it from the worker."""
        self.worker.stop_connector(self.name)
        self.worker.delete(self.name)
        return 0
