"""snapshot.mode=always end to end: every start snapshots the captured tables again, while
streaming resumes from the committed offsets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.connector_tools import ConnectorProcess, connector_document, rebuild
from tests.kafka_services import Broker
from tests.services import MariaDbPair

pytestmark = pytest.mark.integration


def test_always_snapshots_again_at_every_start(mariadb: MariaDbPair, broker: Broker,
                                               unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    p = mariadb.primary
    p.execute(f"CREATE DATABASE {db}")
    p.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v INT)")
    p.execute(f"INSERT INTO {db}.t VALUES (1, 10), (2, 20), (3, 30)")
    mariadb.wait_synced()
    proc = ConnectorProcess(connector_document(mariadb, broker, db, snapshot__mode="always",
                                               ha__enabled="false"), tmp_path)
    try:
        for start in (1, 2):
            proc.start()
            proc.wait_log(f"snapshot of {db}.t complete", timeout=90)
            if start == 2:  # streamed, not re-read: a change between the two runs
                assert ("snapshot.mode=always: a snapshot of every captured table at this "
                        "start") in proc.log()[proc.log_offset:]
            assert proc.stop() == 0
            if start == 1:
                p.execute(f"UPDATE {db}.t SET v = 21 WHERE id = 2")
                mariadb.wait_synced()
    finally:
        proc.ensure_stopped()
    _, envelopes = rebuild(broker.bootstrap, f"{db}.{db}.t")
    reads = sorted((e["after"]["id"], e["after"]["v"]) for e in envelopes if e["op"] == "r")
    assert reads == [(1, 10), (1, 10), (2, 20), (2, 21), (3, 30), (3, 30)]
    assert [(e["op"], e["after"]["v"]) for e in envelopes if e["op"] == "u"] == [("u", 21)]
