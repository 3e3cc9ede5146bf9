"""A start that fails, with `rest.port` set, as a Kafka Connect user expects it: a database
that refuses or does not answer leaves the process up with the task FAILED and its reason,
and POST restart tries again; without its broker the process does not start (exit 1).
`gtidmark run` itself, a real MariaDB and broker."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from tests.connector_tools import connector_document
from tests.integration.test_rest import create_table, insert, wait_events, wait_ready
from tests.kafka_services import Broker
from tests.rest_tools import rest_connector
from tests.services import MariaDbPair, free_port


def test_a_refused_start_is_failed_with_its_reason_and_restart_tries_again(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    db, user = unique_name, f"late_{unique_name}"
    create_table(mariadb, db, 0)
    conn, client, doc = rest_connector(mariadb, broker, db, tmp_path, database__user=user,
                                       database__password="late-pw")
    name = doc["name"]
    reason = (f"the database at 127.0.0.1:{mariadb.replica.port} refused user '{user}' "
              "(database.user, database.password): Access denied for user "
              f"'{user}'@'127.0.0.1' (using password: YES)")
    conn.start()
    try:
        status = client.wait_state(name, "FAILED")
        assert status["connector"]["state"] == "RUNNING"  # as in Connect: the task failed
        assert status["tasks"][0]["trace"] == reason
        assert client.get("/ready").status == 503
        health = client.get("/health")
        assert (health.status, health.body["message"]) == (503, f"the connector failed: {reason}")
        conn.wait_log(f"cannot start: {reason}")
        conn.wait_log(f"connector failed; it stays FAILED until POST /connectors/{name}/restart")
        # Connect's ?onlyFailed restarts what FAILED: the task, only with ?includeTasks.
        untouched = client.call("POST", f"/connectors/{name}/restart?onlyFailed=true")
        assert untouched.status == 202
        assert [untouched.body["connector"]["state"], untouched.body["tasks"][0]["state"]] == [
            "RUNNING", "FAILED"]
        mariadb.primary.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY 'late-pw'")
        mariadb.primary.execute(f"GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* "
                                f"TO '{user}'@'%'")
        mariadb.wait_synced()
        restarting = client.call(
            "POST", f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true")
        assert restarting.status == 202
        assert [restarting.body["connector"]["state"], restarting.body["tasks"][0]["state"]] == [
            "RUNNING", "RESTARTING"]
        wait_ready(client)
        assert "trace" not in client.get(f"/connectors/{name}/status").body["tasks"][0]
        insert(mariadb, db, [1])
        assert [e["after"]["id"] for e in wait_events(broker, db, 1)] == [1]
        assert conn.stop() == 0
    finally:
        conn.ensure_stopped()
        mariadb.primary.execute(f"DROP USER IF EXISTS '{user}'@'%'")


def test_an_unreachable_database_is_failed_until_stopped(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """SIGTERM while the start is FAILED exits 1, as with a failed task."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        conn, client, doc = rest_connector(mariadb, broker, unique_name, tmp_path,
                                           database__port=str(port))
        conn.start()
        try:
            status = client.wait_state(doc["name"], "FAILED")
            assert status["tasks"][0]["trace"] == (
                f"cannot reach the database at 127.0.0.1:{port} (database.hostname, "
                "database.port): connection refused")
            assert conn.stop() == 1
        finally:
            conn.ensure_stopped()


def test_without_its_broker_the_process_does_not_start(mariadb: MariaDbPair, broker: Broker,
                                                       unique_name: str,
                                                       tmp_path: Path) -> None:
    """A Connect worker needs its Kafka cluster: exit 1 with one line, as without REST."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        kafka = closed.getsockname()[1]
        path = tmp_path / "connector.json"
        path.write_text(json.dumps(connector_document(
            mariadb, broker, unique_name, bootstrap__servers=f"127.0.0.1:{kafka}",
            consumer__socket__timeout__ms="2000", rest__port=str(free_port()))))
        done = subprocess.run([str(Path(sys.executable).with_name("gtidmark")), "run",
                               "--config", str(path)], capture_output=True, text=True,
                              timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert [line for line in done.stderr.splitlines() if "error" in line.lower()] == [
        (f"error: cannot reach Kafka at 127.0.0.1:{kafka} (bootstrap.servers): "
         "connection refused")]
