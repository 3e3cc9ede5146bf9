"""A leader whose task FAILED while streaming (REST on) gives the lease up: a standby takes
over and streams, while the failed instance stays up, FAILED, for inspection (#32)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from tests.connector_tools import ConnectorProcess, connector_document
from tests.ha_tools import leader_record, offsets_records
from tests.integration.test_rest import insert, reader_child, wait_events
from tests.kafka_services import Broker
from tests.rest_tools import RestClient
from tests.services import MariaDbPair, free_port, wait_for


def test_a_leader_whose_task_failed_releases_the_lease_and_a_standby_takes_over(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    """Before: the FAILED leader kept the lease and the standby waited for ever."""
    db = unique_name
    mariadb.primary.execute(f"CREATE DATABASE {db}")
    mariadb.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(30))")
    mariadb.wait_synced()
    ports = [free_port(), free_port()]
    procs = []
    for i, port in enumerate(ports):
        workdir = tmp_path / f"instance{i}"
        workdir.mkdir()
        proc = ConnectorProcess(connector_document(mariadb, broker, db,
                                                   rest__port=str(port)), workdir)
        connector.append(proc)
        procs.append(proc)
    leader, standby = procs
    leader.start()
    leader.wait_log("active: epoch")
    standby.start()
    standby.wait_log("standby: waiting for the lease")
    name = f"{db}-connector"
    insert(mariadb, db, range(1, 4))
    wait_events(broker, db, 3)
    assert leader.proc is not None
    os.kill(reader_child(leader.proc.pid), signal.SIGKILL)  # the task fails while streaming
    RestClient(ports[0]).wait_state(name, "FAILED")
    leader.wait_log("the task FAILED: lease released")
    standby.wait_log("active: epoch", timeout=30)
    insert(mariadb, db, range(4, 7))  # written after the failure: the standby streams them
    events = wait_events(broker, db, 6)
    assert {e["after"]["id"] for e in events} == set(range(1, 7))
    assert standby.proc is not None
    wait_for(lambda: (leader_record(offsets_records(broker, connector_document(
        mariadb, broker, db))) or {}).get("writer", {}).get("pid") == standby.proc.pid,
        30, "the standby's epoch in the offsets")
    assert leader.proc.poll() is None  # still up, FAILED, for inspection
    assert RestClient(ports[0]).get(f"/connectors/{name}/status").body["tasks"][0][
        "state"] == "FAILED"
