"""A chunk query the replica kills is read again; a table the connector may not read is
FAILED (log, `gtidmark status`, REST, /metrics), never reported finished with rows missing.

The chunk SELECT is caught deterministically: a root session on the replica holds
`LOCK TABLES ... WRITE` on the table (a metadata lock, no write), so the connector's chunk
SELECT waits in the processlist, where the test finds it by its SQL text and kills it as a
DBA (or pt-kill) would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pymysql
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.connector_tools import ROOT, ConnectorProcess, SourcePair
from tests.integration.test_snapshot import signal, start
from tests.integration.test_snapshot_keys import reads
from tests.kafka_services import Broker
from tests.rest_tools import RestClient
from tests.services import free_port, wait_for
from tests.workload import insert_sequence

pytestmark = pytest.mark.integration

ROWS = 40_000


def waiting_chunk_query(replica: pymysql.connections.Connection, db: str,
                        table: str) -> int | None:
    """The id of the connection whose chunk SELECT of `db.table` is running, if one is."""
    with replica.cursor() as cur:
        cur.execute("SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' "
                    "AND ID <> CONNECTION_ID() "
                    "AND INFO LIKE %s AND INFO LIKE '%%ASC LIMIT%%'",
                    (f"%FROM `{db}`.`{table}`%",))
        row = cur.fetchone()
    return None if row is None else int(row[0])


def kill_chunk_queries(source: SourcePair, db: str, table: str, times: int) -> None:
    """Hold the table locked on the replica and kill the connector's chunk SELECT `times`
    times (each retry waits on the lock again), then let the next one through."""
    locker = source.replica.root()
    killer = source.replica.root()
    try:
        with locker.cursor() as cur:
            cur.execute(f"LOCK TABLES `{db}`.`{table}` WRITE")
        for _ in range(times):
            found = wait_for(lambda: waiting_chunk_query(killer, db, table), 60,
                             "the connector's chunk SELECT waiting on the lock")
            with killer.cursor() as cur:
                cur.execute(f"KILL QUERY {found}")
            wait_for(lambda: waiting_chunk_query(killer, db, table) is None, 30,
                     "the killed chunk SELECT to end")
        with locker.cursor() as cur:
            cur.execute("UNLOCK TABLES")
    finally:
        locker.close()
        killer.close()


def test_killed_chunk_queries_are_read_again_and_every_row_arrives(
        source: SourcePair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    db = unique_name
    p = source.primary
    p.execute(f"CREATE DATABASE {db}")
    p.execute(f"CREATE TABLE {db}.wide (id INT PRIMARY KEY, pad VARCHAR(200))")
    insert_sequence(source, db, "wide", ROWS, "seq, REPEAT('x', 200)")
    source.wait_synced()
    proc = start(source, broker, db, tmp_path, connector,
                 incremental__snapshot__chunk__size="1000")
    signal(proc, "execute-snapshot", tables=[f"{db}.wide"])
    proc.wait_log(f"snapshot of {db}.wide starts")
    kill_chunk_queries(source, db, "wide", times=2)
    proc.wait_log(f"snapshot of {db}.wide complete", timeout=120)

    def all_reads() -> list[dict[str, Any]] | None:
        rows = reads(broker, f"{db}.{db}.wide")
        return rows if len(rows) >= ROWS else None

    arrived = wait_for(all_reads, 60, f"{ROWS} snapshot reads")
    assert sorted(r["id"] for r in arrived) == list(range(1, ROWS + 1))
    log = proc.log()
    retried = [line for line in log.splitlines()
               if f"snapshot chunk of {db}.wide failed (error 1317 (query interrupted))" in line]
    assert len(retried) == 2, retried
    assert "FAILED" not in log and " finished" in log


def status_json(proc: ConnectorProcess) -> dict[str, Any]:
    result = subprocess.run([sys.executable, "-m", "connector.cli", "status", "--config",
                             str(proc.config_path), "--json"], capture_output=True, text=True,
                            timeout=60, check=True, cwd=ROOT)
    return dict(json.loads(result.stdout))


def failed_metric(client: RestClient) -> dict[str, float]:
    text = client.get("/metrics").body
    return {s.labels["table"]: s.value for f in text_string_to_metric_families(text)
            for s in f.samples if s.name == "gtidmark_snapshot_table_failed"}


def test_a_table_the_connector_may_not_read_is_failed_and_the_others_finish(
        source: SourcePair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    """The connector's user reads each table by a table grant; SELECT on `secret` is revoked
    on the primary (it replicates) once the snapshot is queued."""
    db = unique_name
    user = f"u_{db}"[:32]
    p = source.primary
    p.execute(f"CREATE DATABASE {db}")
    for table, rows in (("first", 2000), ("secret", 100), ("third", 100)):
        p.execute(f"CREATE TABLE {db}.{table} (id INT PRIMARY KEY, v INT)")
        insert_sequence(source, db, table, rows, "seq, seq")
    p.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")
    p.execute(f"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '{user}'@'%'")
    for table in ("first", "secret", "third"):
        p.execute(f"GRANT SELECT ON {db}.{table} TO '{user}'@'%'")
    source.wait_synced()
    port = free_port()
    proc = start(source, broker, db, tmp_path, connector, database__user=user,
                 database__password="pw", rest__port=str(port),
                 incremental__snapshot__chunk__size="200",
                 incremental__snapshot__chunk__delay__ms="200")
    signal(proc, "execute-snapshot", tables=[f"{db}.first", f"{db}.secret", f"{db}.third"])
    proc.wait_log(f"snapshot of {db}.first starts")
    p.execute(f"REVOKE SELECT ON {db}.secret FROM '{user}'@'%'")
    source.wait_synced()
    proc.wait_log(f"snapshot of {db}.third complete", timeout=120)
    log = proc.log()
    assert f"snapshot of {db}.secret FAILED after 0 rows" in log
    assert f"snapshot of {db}.first complete: 2000 rows" in log
    assert f"; FAILED: {db}.secret" in log and " finished" not in log
    assert f"snapshot of {db}.secret complete" not in log
    assert reads(broker, f"{db}.{db}.secret") == []
    client = RestClient(port)
    status = wait_for(lambda: client.get(f"/connectors/{db}-connector/status").body.get(
        "snapshot"), 10, "the failure in the REST status (its view is refreshed every 0.2 s)")
    assert [(f["table"], f["state"]) for f in status["failed"]] == [(f"{db}.secret", "FAILED")]
    assert failed_metric(client) == {f"{db}.secret": 1}

    def committed_failure() -> dict[str, Any] | None:
        shown = status_json(proc)
        return shown if shown.get("snapshot_failed") else None

    shown = wait_for(committed_failure, 30, "the failure in the committed offsets")
    assert [f["table"] for f in shown["snapshot_failed"]] == [f"{db}.secret"]
    assert "snapshot" not in shown  # none running: nothing says it is still going
