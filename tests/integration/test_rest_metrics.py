"""GET /metrics of a running `gtidmark run` over HTTP: Debezium's dashboard names move as the
workload says (real MariaDB and broker)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from connector.rest.metrics import NOT_EXPORTED
from tests.integration.test_rest import insert, reader_child, ready_connector, wait_events
from tests.kafka_services import Broker
from tests.rest_tools import RestClient, change_events
from tests.services import MariaDb, MariaDbPair, wait_for
from tests.unit.test_dashboard_metrics import GENERIC_DASHBOARD, MYSQL_DASHBOARD

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(client: RestClient) -> Samples:
    """GET /metrics parsed by prometheus_client: (sample name, sorted labels) -> value."""
    reply = client.get("/metrics")
    assert reply.status == 200
    assert reply.headers["Content-Type"].startswith("text/plain; version=")
    out = {}
    for family in text_string_to_metric_families(reply.body):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def local_tcp_ports(pid: int) -> set[int]:
    """The local ports of the TCP sockets process `pid` holds (from /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd)
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def kill_binlog_dump(server: MariaDb, reader_pid: int) -> None:
    """KILL, on `server`, the dump thread serving this reader process's binlog connection."""
    ports = local_tcp_ports(reader_pid)
    dumps = [(thread, host) for thread, host, command in server.execute(
        "SELECT ID, HOST, COMMAND FROM information_schema.PROCESSLIST")
        if command.startswith("Binlog Dump") and int(host.rsplit(":", 1)[1]) in ports]
    assert len(dumps) == 1, dumps
    server.execute(f"KILL {dumps[0][0]}")


def test_metrics_follow_a_known_workload(mariadb: MariaDbPair, broker: Broker,
                                         unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    with ready_connector(mariadb, broker, db, tmp_path, rows=3000,
                         table__include__list=f"{db}.t") as (conn, client, doc):
        labels = {"plugin": "mariadb", "name": db}

        def debezium(attribute: str, context: str, **extra: str) -> float:
            key = tuple(sorted({**labels, "context": context, **extra}.items()))
            return scrape(client)[(f"debezium_metrics_{attribute}", key)]

        assert debezium("MilliSecondsBehindSource", "streaming") == -1  # nothing applied yet
        assert debezium("Connected", "streaming") == 1
        assert debezium("IsGtidModeEnabled", "streaming") == 1
        assert debezium("NumberOfDisconnects", "streaming") == 0
        assert debezium("NumberOfEventsFiltered", "streaming") == 0
        for attribute in ("SnapshotCompleted", "SnapshotAborted", "TotalTableCount",
                          "SnapshotDurationInSeconds", "HoldingGlobalLock"):
            assert debezium(attribute, "snapshot") == 0, attribute
        insert(mariadb, db, range(3001, 3021))  # 20 transactions of one row
        wait_events(broker, db, 20)
        wait_for(lambda: debezium("TotalNumberOfEventsSeen", "streaming") == 20, 30,
                 "20 events seen")
        assert debezium("NumberOfCommittedTransactions", "streaming") == 20
        assert 0 <= debezium("MilliSecondsBehindSource", "streaming") < 3000  # idle: near 0
        assert 0 <= debezium("MilliSecondsSinceLastEvent", "streaming") < 30_000
        total = debezium("QueueTotalCapacity", "streaming")
        assert total > 0 and debezium("QueueRemainingCapacity", "streaming") == total
        assert debezium("SnapshotRunning", "snapshot") == 0

        mariadb.primary.execute(f"CREATE TABLE {db}.other (id INT PRIMARY KEY)")
        for i in range(3):  # three rows events of a table the include list leaves out
            mariadb.primary.execute(f"INSERT INTO {db}.other VALUES ({i})")
        wait_for(lambda: debezium("NumberOfEventsFiltered", "streaming") == 3, 30,
                 "3 filtered events")
        assert debezium("TotalNumberOfEventsSeen", "streaming") == 20  # none of them emitted
        end = mariadb.replica.execute("SHOW MASTER STATUS")[0][1]
        wait_for(lambda: debezium("BinlogPosition", "streaming") == end, 30,
                 f"BinlogPosition at the replica's binlog end {end}")

        sent = client.call("POST", f"/connectors/{doc['name']}/signals",
                           {"type": "execute-snapshot",
                            "data": {"data-collections": [f"{db}.t"], "type": "incremental"}})
        assert sent.status == 202 and "at offset" in sent.body["message"]
        conn.wait_log(f"snapshot of {db}.t complete")
        wait_for(lambda: debezium("SnapshotRunning", "snapshot") == 0 and
                 debezium("RowsScanned", "snapshot", table=f"{db}.t") == 3020, 30,
                 "snapshot metrics at the end")
        reads = [e for e in change_events(broker, f"{db}.{db}.t") if e["op"] == "r"]
        assert len(reads) == 3020  # RowsScanned is the table's size, as emitted
        served = {(name, dict(key)["context"]) for name, key in scrape(client)
                  if name.startswith("debezium_metrics_") and set(labels.items()) <= set(key)}
        for name in (GENERIC_DASHBOARD | MYSQL_DASHBOARD) - set(NOT_EXPORTED):
            assert {c for n, c in served if n == f"debezium_metrics_{name}"} & \
                {"streaming", "snapshot"}, name  # RowsScanned: once a table was read
        assert debezium("SnapshotCompleted", "snapshot") == 1
        assert debezium("SnapshotAborted", "snapshot") == 0
        assert debezium("TotalTableCount", "snapshot") == 1
        assert debezium("SnapshotDurationInSeconds", "snapshot") >= 0
        assert debezium("RemainingTableCount", "snapshot") == 0
        assert debezium("SnapshotPaused", "snapshot") == 0
        assert debezium("ChunkId", "snapshot") >= 3  # 3,020 rows in chunks of 1,024
        assert debezium("TotalNumberOfEventsSeen", "snapshot") == 3020
        assert debezium("HoldingGlobalLock", "snapshot") == 0
        own = scrape(client)
        connector = (("connector", doc["name"]),)
        assert own[("gtidmark_snapshot_window_open_seconds", connector)] == 0
        assert own[("gtidmark_snapshot_window_rows_dropped_total", connector)] == 0
        assert ("gtidmark_snapshot_chunks_reselected_total", connector) in own
        wait_for(lambda: scrape(client)[("gtidmark_producer_acks_pending", connector)] == 0
                 and scrape(client)[("gtidmark_offsets_commit_age_seconds", connector)] == 0,
                 30, "everything acknowledged and committed")
        assert ("gtidmark_producer_queue_messages", connector) in own
        assert own[("gtidmark_connector_state", (("connector", doc["name"]),
                                                 ("state", "RUNNING")))] == 1

        signals = f"/connectors/{doc['name']}/signals"
        for signal in ({"type": "pause-snapshot", "data": {}},  # so no chunk is read
                       {"type": "execute-snapshot",
                        "data": {"data-collections": [f"{db}.t"], "type": "incremental"}}):
            assert client.call("POST", signals, signal).status == 202
        wait_for(lambda: debezium("SnapshotPaused", "snapshot") == 1 and
                 debezium("SnapshotCompleted", "snapshot") == 0, 30, "a paused snapshot")
        stop: dict[str, Any] = {"type": "stop-snapshot",
                                "data": {"data-collections": [], "type": "incremental"}}
        assert client.call("POST", signals, stop).status == 202
        wait_for(lambda: debezium("SnapshotAborted", "snapshot") == 1, 30, "snapshot aborted")
        assert debezium("SnapshotCompleted", "snapshot") == 0
        assert debezium("TotalTableCount", "snapshot") == 1  # the same table again

        assert conn.proc is not None
        kill_binlog_dump(mariadb.replica, reader_child(conn.proc.pid))
        wait_for(lambda: debezium("NumberOfDisconnects", "streaming") == 1, 30,
                 "one disconnect counted")
        insert(mariadb, db, [3021])  # streamed after the reconnect
        wait_events(broker, db, 3020 + 21)
        # The engine publishes its view every 0.2 s: the record can reach the topic first.
        wait_for(lambda: debezium("Connected", "streaming") == 1, 5, "connected again")
        assert conn.stop() == 0
