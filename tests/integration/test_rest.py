"""The Kafka Connect REST API of a running `gtidmark run`, over HTTP, real MariaDB and broker."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from connector import __version__
from connector.gtid import MariaDbGtidPos
from tests.connector_tools import ConnectorProcess
from tests.integration.test_streaming import committed_offsets
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.rest_tools import RestClient, change_events, rest_connector
from tests.services import MariaDbPair, wait_for

STOP_FIRST = ("Connectors must be in the STOPPED state before their offsets can be modified. "
              "This can be done for the specified connector by issuing a 'PUT' request to the "
              "'/connectors/{name}/stop' endpoint")


def create_table(mariadb: MariaDbPair, db: str, rows: int) -> None:
    """`db`.t with rows 1..`rows` written in one statement."""
    mariadb.primary.execute(f"CREATE DATABASE {db}")
    mariadb.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    if rows:
        mariadb.primary.root().cursor().executemany(
            f"INSERT INTO {db}.t VALUES (%s, %s)", [(i, f"v{i}") for i in range(1, rows + 1)])


def insert(mariadb: MariaDbPair, db: str, ids: Any) -> None:
    """One transaction per row."""
    for i in ids:
        mariadb.primary.execute(f"INSERT INTO {db}.t VALUES (%s, %s)", (i, f"v{i}"))


def wait_events(broker: Broker, db: str, count: int, timeout: float = 90) -> list[dict[str, Any]]:
    def enough() -> list[dict[str, Any]] | None:
        events = change_events(broker, f"{db}.{db}.t")
        return events if len(events) >= count else None
    return wait_for(enough, timeout, f"{count} events on {db}.{db}.t", interval=0.3)


def raw_request(port: int, request: bytes) -> bytes:
    """Bytes on a socket, for requests no HTTP client would send."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def wait_ready(client: RestClient, timeout: float = 90) -> None:
    wait_for(lambda: client.get("/ready").status == 200, timeout, "GET /ready 200",
             interval=0.2)


@contextmanager
def ready_connector(mariadb: MariaDbPair, broker: Broker, db: str, workdir: Path,
                    rows: int = 0, cli_options: tuple[str, ...] = (), **settings: Any
                    ) -> Iterator[tuple[ConnectorProcess, RestClient, dict[str, Any]]]:
    """A new table of `rows` rows and a connector on it, once GET /ready answers 200; killed
    on the way out if it still runs."""
    create_table(mariadb, db, rows)
    conn, client, doc = rest_connector(mariadb, broker, db, workdir, **settings)
    conn.cli_options = list(cli_options)
    conn.start()
    try:
        wait_ready(client)
        yield conn, client, doc
    finally:
        conn.ensure_stopped()


def assert_connect_error(reply: Any, status: int, message: str | None = None) -> None:
    assert reply.status == status, reply
    assert set(reply.body) == {"error_code", "message"}, reply.body
    assert reply.body["error_code"] == status
    assert "Traceback" not in reply.body["message"] and "File \"" not in reply.body["message"]
    if message is not None:
        assert reply.body["message"] == message


def test_status_info_and_connect_error_shapes(mariadb: MariaDbPair, broker: Broker,
                                             unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    with ready_connector(mariadb, broker, db, tmp_path) as (conn, client, doc):
        name = doc["name"]
        root = client.get("/")
        assert root.status == 200 and set(root.body) == {"version", "commit", "kafka_cluster_id"}
        assert client.get("/connectors").body == [name]
        info = client.get(f"/connectors/{name}").body
        assert info["name"] == name and info["type"] == "source"
        assert info["tasks"] == [{"connector": name, "task": 0}]
        assert info["config"]["topic.prefix"] == db and info["config"]["name"] == name
        assert info["config"]["database.password"] == "********"
        assert client.get(f"/connectors/{name}/config").body == info["config"]
        insert(mariadb, db, range(1, 6))
        wait_events(broker, db, 5)
        status = client.get(f"/connectors/{name}/status")
        assert status.status == 200
        worker = f"127.0.0.1:{doc['config']['rest.port']}"
        assert status.body == {"name": name, "type": "source",
                               "connector": {"state": "RUNNING", "worker_id": worker,
                                             "version": __version__},
                               "tasks": [{"id": 0, "state": "RUNNING", "worker_id": worker,
                                          "version": __version__}]}
        expanded = client.get("/connectors?expand=status&expand=info").body
        assert expanded[name]["status"]["connector"]["state"] == "RUNNING"
        assert expanded[name]["info"] == info
        # Errors: Kafka Connect's status codes and {"error_code", "message"} bodies.
        assert_connect_error(client.get("/connectors/other/status"), 404,
                             "No status found for connector other")
        assert_connect_error(client.get("/connectors/other"), 404, "Connector other not found")
        assert_connect_error(client.call("PUT", "/connectors/other/pause"), 404,
                             "Unknown connector other")
        assert_connect_error(client.get("/nothing/here"), 404, "HTTP 404 Not Found")
        assert_connect_error(client.call("DELETE", f"/connectors/{name}/pause"), 405)
        offsets = f"/connectors/{name}/offsets"
        assert_connect_error(client.call("PATCH", offsets, raw=b"{not json"), 500)
        assert_connect_error(client.call("PATCH", offsets, {"key": []}), 500)
        assert_connect_error(client.call("PATCH", offsets, {"offsets": []}), 400,
                             "Partitions / offsets need to be provided for an alter offsets "
                             "request")
        current = client.get(offsets).body["offsets"][0]
        assert_connect_error(client.call("PATCH", offsets, {"offsets": [current]}), 400,
                             STOP_FIRST.format(name=name))
        assert_connect_error(client.call("DELETE", offsets), 400, STOP_FIRST.format(name=name))
        assert_connect_error(client.call("POST", f"/connectors/{name}/signals",
                                         {"type": "nonsense"}), 400)
        garbled = raw_request(int(doc["config"]["rest.port"]),
                              b"PUT /connectors HTTP/1.1\r\nContent-Length: many\r\n"
                              b"Connection: close\r\n\r\n")
        head, _, payload = garbled.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400")
        assert json.loads(payload) == {"error_code": 400, "message": "bad request"}
        # The connector kept streaming through all of it.
        insert(mariadb, db, range(6, 8))
        wait_events(broker, db, 7)
        assert client.get(f"/connectors/{name}/status").body["tasks"][0]["state"] == "RUNNING"
        assert conn.stop() == 0
    assert "Traceback" not in conn.log()


def test_pause_holds_position_and_resume_loses_nothing(mariadb: MariaDbPair, broker: Broker,
                                                      unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    with ready_connector(mariadb, broker, db, tmp_path) as (conn, client, doc):
        name = doc["name"]
        insert(mariadb, db, range(1, 51))
        wait_events(broker, db, 50)
        wait_for(lambda: MariaDbGtidPos.parse(committed_offsets(broker, doc)["gtids"]).covers(
            MariaDbGtidPos.parse(mariadb.wait_synced())), 60, "offsets at the primary's end")
        paused = client.call("PUT", f"/connectors/{name}/pause")
        assert paused.status == 202 and paused.body is None
        status = client.wait_state(name, "PAUSED")
        assert status["connector"]["state"] == "PAUSED"
        assert client.get("/ready").status == 503
        before = committed_offsets(broker, doc)
        insert(mariadb, db, range(51, 101))
        mariadb.wait_synced()
        # Paused: nothing comes out and the position stays, for as long as we look.
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            assert len(change_events(broker, f"{db}.{db}.t")) == 50
            time.sleep(0.3)
        assert committed_offsets(broker, doc)["gtids"] == before["gtids"]
        assert client.get(f"/connectors/{name}/offsets").body["offsets"][0]["offset"][
            "gtids"] == before["gtids"]
        # `gtidmark status --json` tells the same: the REST API's state, 50 transactions behind.
        report = json.loads(subprocess.run(
            [sys.executable, "-m", "connector.cli", "status", "--json", "--config",
             str(conn.config_path)], capture_output=True, text=True, timeout=60,
            check=True).stdout)
        assert (report["state"]["connector"], report["state"]["task"]) == (
            "PAUSED", status["tasks"][0]["state"])
        assert report["replica_behind"] == 50
        assert client.call("PUT", f"/connectors/{name}/resume").status == 202
        client.wait_state(name, "RUNNING")
        events = wait_events(broker, db, 100)
        assert sorted(e["after"]["id"] for e in events) == list(range(1, 101))
        wait_ready(client)
        assert conn.stop() == 0


def offsets_records(broker: Broker, doc: dict[str, Any]) -> list[bytes | None]:
    """Every value written under this connector's key in its offsets topic, in order."""
    prefix = doc["config"]["topic.prefix"]
    key = json.dumps([doc["name"], {"server": prefix}], separators=(",", ":")).encode()
    return [m.value() for m in consume_all(broker.bootstrap, f"{prefix}-offsets")
            if m.key() == key]


def test_restart_stop_and_offsets_read_altered_reset(mariadb: MariaDbPair, broker: Broker,
                                                     unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    with ready_connector(mariadb, broker, db, tmp_path) as (conn, client, doc):
        name = doc["name"]
        offsets = f"/connectors/{name}/offsets"
        insert(mariadb, db, range(1, 11))
        wait_events(broker, db, 10)
        restarted = client.call("POST", f"/connectors/{name}/restart")
        assert restarted.status == 204 and restarted.body is None
        conn.wait_log("resuming from committed offsets")
        client.wait_state(name, "RUNNING")
        insert(mariadb, db, range(11, 16))
        after_15 = mariadb.primary.gtid_binlog_pos()
        insert(mariadb, db, range(16, 21))
        events = wait_events(broker, db, 20)
        # A restart flushes and commits first: nothing repeated, nothing lost.
        assert [e["after"]["id"] for e in events] == list(range(1, 21))
        end = MariaDbGtidPos.parse(mariadb.wait_synced())

        def served_equals_topic() -> bool:
            served = client.get(offsets).body
            stored = committed_offsets(broker, doc)
            return stored is not None and MariaDbGtidPos.parse(stored["gtids"]).covers(end) \
                and served == {"offsets": [{"partition": {"server": db}, "offset": stored}]}
        wait_for(served_equals_topic, 60, "GET offsets equal to the offsets topic", interval=0.3)

        stopped = client.call("PUT", f"/connectors/{name}/stop")
        assert stopped.status == 204
        status = client.get(f"/connectors/{name}/status").body
        assert status["connector"]["state"] == "STOPPED" and status["tasks"] == []
        stored = committed_offsets(broker, doc)
        assert client.get(offsets).body["offsets"][0]["offset"] == stored
        # Altered while stopped: streaming resumes from the position given (16..20 again).
        earlier = {**stored, "gtids": after_15}
        altered = client.call("PATCH", offsets,
                              {"offsets": [{"partition": {"server": db}, "offset": earlier}]})
        assert altered.status == 200, altered
        assert altered.body == {"message": "The offsets for this connector have been altered "
                                           "successfully"}
        written = committed_offsets(broker, doc)
        assert written is not None and written["epoch"] == stored["epoch"] + 1
        writer = ("epoch", "writer_host", "writer_pid", "writer_since")
        assert {k: v for k, v in written.items() if k not in writer} == \
            {k: v for k, v in earlier.items() if k not in writer}
        assert client.get(offsets).body["offsets"][0]["offset"] == written
        wrong = client.call("PATCH", offsets, {"offsets": [{"partition": {"server": "x"},
                                                            "offset": earlier}]})
        assert wrong.status == 400 and wrong.body["error_code"] == 400
        assert client.call("PUT", f"/connectors/{name}/resume").status == 202
        client.wait_state(name, "RUNNING")
        events = wait_events(broker, db, 25)
        assert [e["after"]["id"] for e in events[20:]] == list(range(16, 21))

        assert client.call("PUT", f"/connectors/{name}/stop").status == 204
        reset = client.call("DELETE", offsets)
        assert reset.status == 200
        assert reset.body == {"message": "The offsets for this connector have been reset "
                                         "successfully"}
        assert offsets_records(broker, doc)[-1] is None  # a tombstone: the position is gone
        assert client.get(offsets).body == {"offsets": []}
        assert client.call("PUT", f"/connectors/{name}/resume").status == 202
        conn.wait_log("streaming from the current position")  # a first start again
        wait_ready(client)
        insert(mariadb, db, [21])
        events = wait_events(broker, db, 26)
        assert events[-1]["after"]["id"] == 21
        assert conn.stop() == 0


def reader_child(pid: int) -> int:
    """The binlog reader process the connector started."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            if "connector.binlog.process" in Path(f"/proc/{child}/cmdline").read_text():
                return int(child)
    raise AssertionError("no binlog reader process found")


def test_failed_task_shows_trace_and_restart_recovers(mariadb: MariaDbPair, broker: Broker,
                                                      unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    with ready_connector(mariadb, broker, db, tmp_path) as (conn, client, doc):
        name = doc["name"]
        insert(mariadb, db, range(1, 4))
        wait_events(broker, db, 3)
        assert conn.proc is not None
        os.kill(reader_child(conn.proc.pid), signal.SIGKILL)
        status = client.wait_state(name, "FAILED")
        assert status["connector"]["state"] == "RUNNING"  # as in Connect: the task failed
        assert "binlog reader process ended" in status["tasks"][0]["trace"]
        health = client.get("/health")
        assert health.status == 503 and health.body["status"] == "unhealthy"
        assert client.get("/ready").status == 503
        insert(mariadb, db, range(4, 7))  # written while the connector is down
        assert client.call("POST", f"/connectors/{name}/restart").status == 204
        client.wait_state(name, "RUNNING")
        assert "trace" not in client.get(f"/connectors/{name}/status").body["tasks"][0]
        assert client.get("/health").status == 200
        insert(mariadb, db, range(7, 10))
        events = wait_events(broker, db, 9)
        assert {e["after"]["id"] for e in events} == set(range(1, 10))
        assert conn.stop() == 0


def test_basic_auth_refuses_and_never_logs_the_password(mariadb: MariaDbPair, broker: Broker,
                                                        unique_name: str,
                                                        tmp_path: Path) -> None:
    db = unique_name
    secret = "s3cret-Pa55-rest"
    with ready_connector(mariadb, broker, db, tmp_path,
                         cli_options=("--log-level", "DEBUG"),  # requests are logged at DEBUG
                         rest__basic__auth__user="operator",
                         rest__basic__auth__password=secret) as (conn, client, doc):
        name = doc["name"]
        assert client.get("/health").status == 200
        for path in ("/", "/connectors", f"/connectors/{name}/status", "/metrics"):
            for credentials in (None, ("operator", "wrong"), ("someone", secret)):
                refused = client.get(path, auth=credentials)
                assert refused.status == 401, (path, credentials)
                assert refused.body == {"error_code": 401,
                                        "message": "User cannot access the resource."}
                assert refused.headers["WWW-Authenticate"].startswith("Basic")
        assert client.call("PUT", f"/connectors/{name}/pause", auth=None).status == 401
        assert client.get(f"/connectors/{name}/status").body["connector"]["state"] == "RUNNING"
        bodies = [client.get(p).body for p in ("/connectors?expand=info",
                                               f"/connectors/{name}/config", "/metrics")]
        assert all(reply is not None for reply in bodies)
        assert secret not in json.dumps(bodies)
        assert conn.stop() == 0
    log = conn.log()
    assert "GET /connectors" in log  # the requests were logged, the credentials were not
    assert secret not in log
    assert base64.b64encode(f"operator:{secret}".encode()).decode() not in log
