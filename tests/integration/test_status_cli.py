"""`gtidmark status` from Kafka alone (no rest.port in its file): the state from the status
topic, the lag in seconds against the replica, liveness from the lease group's members;
real MariaDB and broker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.connector_tools import ConnectorProcess, connector_document
from tests.integration.test_rest import create_table, insert, reader_child, ready_connector
from tests.kafka_services import Broker
from tests.services import MariaDbPair, wait_for


def without_rest(doc: dict[str, Any], path: Path) -> Path:
    """The connector's file as `gtidmark status` is given it: no REST port to ask."""
    config = {k: v for k, v in doc["config"].items() if not k.startswith("rest.")}
    path.write_text(json.dumps({"name": doc["name"], "config": config}))
    return path


def status(path: Path, *options: str) -> Any:
    out = subprocess.run([sys.executable, "-m", "connector.cli", "status", *options,
                          "--config", str(path)], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return json.loads(out) if "--json" in options else out


def wait_status(path: Path, what: str, check: Any, timeout: float = 60) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        report: dict[str, Any] = status(path, "--json")
        return report if check(report) else None
    return wait_for(reached, timeout, what, interval=0.5)


def states(report: dict[str, Any]) -> tuple[str | None, str | None]:
    state = report["state"] or {}
    return state.get("connector"), state.get("task")


def test_state_and_lag_in_seconds_follow_the_connector_and_a_kill_leaves_no_member(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    with ready_connector(mariadb, broker, db, tmp_path) as (conn, client, doc):
        name, plain = doc["name"], without_rest(doc, tmp_path / "plain.json")
        insert(mariadb, db, range(1, 4))
        mariadb.wait_synced()
        report = wait_status(plain, "RUNNING, caught up", lambda r: states(r) == (
            "RUNNING", "RUNNING") and r["lag_s"] == 0)
        assert report["state"]["from"] == f"{db}-status"
        assert report["replica_behind"] == 0 and report["alive"] is True
        assert conn.proc is not None
        [member] = report["instances"]
        assert member["leader"] and member["client_id"].endswith(f"-{conn.proc.pid}")
        # Idle: the last event ages, the lag does not.
        time.sleep(5)
        idle = status(plain, "--json")
        assert idle["last_event_age_s"] >= 5 and idle["lag_s"] == 0

        assert client.call("PUT", f"/connectors/{name}/pause").status == 202
        wait_status(plain, "PAUSED", lambda r: states(r) == ("PAUSED", "PAUSED"))
        insert(mariadb, db, range(4, 7))
        mariadb.wait_synced()
        paused = status(plain, "--json")
        assert paused["replica_behind"] == 3 and paused["lag_s"] >= 5  # since row 3, in s

        assert client.call("PUT", f"/connectors/{name}/stop").status == 204
        stopped = wait_status(plain, "STOPPED", lambda r: states(r) == ("STOPPED", None))
        assert stopped["lag_s"] >= paused["lag_s"]  # still behind, and further
        text = status(plain)
        assert "connector STOPPED, task - (none while STOPPED)" in text
        assert "s (at most: the age of the last event streamed)" in text

        assert client.call("PUT", f"/connectors/{name}/resume").status == 202
        wait_status(plain, "RUNNING and caught up again", lambda r: states(r) == (
            "RUNNING", "RUNNING") and r["lag_s"] == 0, timeout=90)

        os.kill(conn.proc.pid, signal.SIGKILL)  # no leaving the group: its session expires
        conn.proc.wait(30)
        dead = wait_status(plain, "no member", lambda r: r["alive"] is False, timeout=30)
        assert dead["instances"] == [] and states(dead) == ("RUNNING", "RUNNING")  # as left
        assert "no instance in the lease group" in status(plain)


def test_a_failed_task_without_rest_leaves_failed_with_its_trace(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    create_table(mariadb, db, 0)
    conn = ConnectorProcess(connector_document(mariadb, broker, db), tmp_path)
    conn.start()
    try:
        report = wait_status(conn.config_path, "RUNNING", lambda r: states(r) == (
            "RUNNING", "RUNNING"), timeout=120)
        assert conn.proc is not None
        assert report["state"]["worker_id"].endswith(f"-{conn.proc.pid}")  # the member's id
        os.kill(reader_child(conn.proc.pid), signal.SIGKILL)
        assert conn.proc.wait(60) == 1  # no REST: nothing restarts it, the process exits
        failed = status(conn.config_path, "--json")
        assert states(failed) == ("RUNNING", "FAILED")  # as in Connect: the task failed
        assert "binlog reader process ended" in failed["state"]["trace"]
        assert failed["alive"] is False and failed["group_members"] == []
        assert "task failure:       " in status(conn.config_path)
    finally:
        conn.ensure_stopped()
