"""The gtidmark Grafana dashboard renders with data: Debian's Prometheus scrapes a running
`gtidmark run` every second while a workload moves its numbers, and every panel target of
docker/monitoring/gtidmark-dashboard.json, sent as Grafana sends it (bench/dashboard.py),
answers with series that have data (real MariaDB and broker)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from bench.dashboard import Window, load, panel_series
from tests.integration.test_rest import insert, reader_child, ready_connector, wait_events
from tests.integration.test_rest_metrics import kill_binlog_dump
from tests.kafka_services import Broker
from tests.prometheus_tools import prometheus_binary, query, running_prometheus, scrapes
from tests.services import MariaDbPair, wait_for

# Targets (panel title, legend) a healthy short run leaves at 0: each still answers with a
# series, asserted below; none of them can be caused on purpose without a hook in the engine.
ZERO_IN_A_SHORT_RUN = {
    ("Queues", "reader queue (rows)"): "rows wait there only while the engine is behind the "
                                       "reader; a test-sized workload never puts it behind "
                                       "at a scrape",
    ("Lag", "snapshot window open"): "a chunk's window is open for milliseconds, between a "
                                     "chunk's SELECT and its high watermark in the stream",
    ("Snapshot chunks", "reselected/min"): "needs a DDL on the table while its chunk is "
                                           "buffered, or a low watermark behind the stream",
    ("Snapshot chunks", "window rows dropped/min"): "needs a write to a row of the chunk "
                                                    "inside its window of milliseconds",
}


def seen(base: str, expr: str) -> Callable[[], bool]:
    """True once Prometheus holds a sample for which `expr` (a filter) keeps a series."""
    return lambda: bool(query(base, expr))


def test_every_dashboard_panel_has_data_from_a_scraped_connector(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    assert prometheus_binary() is not None, "no prometheus binary: `make setup` installs it"
    db = unique_name
    dashboard = load()
    # The primary: a statement-logged write there is a skipped event (the replica re-logs
    # it as rows). Without HA the broker may be paused: delivery waits instead of failing.
    with ready_connector(mariadb, broker, db, tmp_path, rows=3000,
                         database__port=str(mariadb.primary.port), ha__enabled="false",
                         table__include__list=f"{db}.t",
                         # 3 chunks 1.5 s apart: the snapshot runs for several scrapes
                         incremental__snapshot__chunk__delay__ms="1500",
                         event__processing__failure__handling__mode="warn"
                         ) as (conn, client, doc):
        signals = f"/connectors/{doc['name']}/signals"
        with running_prometheus(f"127.0.0.1:{doc['config']['rest.port']}",
                                tmp_path / "prometheus") as prom:
            wait_for(lambda: scrapes(prom) >= 2, 30, "two scrapes", interval=0.2)

            def until(expr: str, what: str) -> None:
                wait_for(seen(prom, expr), 30, f"Prometheus to see {what}", interval=0.2)

            start = time.time()  # the window below reaches back to the first write
            insert(mariadb, db, range(3001, 3021))  # streamed row changes
            mariadb.primary.execute(f"CREATE TABLE {db}.other (id INT PRIMARY KEY)")
            mariadb.primary.execute(f"INSERT INTO {db}.other VALUES (1), (2)")  # filtered
            statement = mariadb.primary.root()
            with statement.cursor() as cur:  # skipped under failure mode warn
                cur.execute("SET SESSION binlog_format = 'STATEMENT'")
                cur.execute(f"INSERT INTO {db}.t VALUES (3021, 'statement')")
            statement.close()
            wait_events(broker, db, 20)
            until("debezium_metrics_NumberOfSkippedEvents > 0", "a skipped event")
            until("debezium_metrics_NumberOfEventsFiltered > 0", "filtered events")

            broker.pause()  # records queue and wait for acks; offsets wait for a commit
            try:
                insert(mariadb, db, range(4001, 4011))
                for expr in ("gtidmark_producer_queue_messages > 0",
                             "gtidmark_producer_acks_pending > 0",
                             "gtidmark_offsets_commit_age_seconds > 0"):
                    until(expr, expr)
            finally:
                broker.resume()

            snapshot = {"type": "execute-snapshot",
                        "data": {"data-collections": [f"{db}.t"], "type": "incremental"}}
            assert client.call("POST", signals, snapshot).status == 202
            until("debezium_metrics_SnapshotRunning == 1", "a running snapshot")
            conn.wait_log(f"snapshot of {db}.t complete")
            until("debezium_metrics_RowsScanned > 0", "snapshot rows")
            for signal in ({"type": "pause-snapshot", "data": {}}, snapshot):
                assert client.call("POST", signals, signal).status == 202
            until("debezium_metrics_SnapshotPaused == 1", "a paused snapshot")
            stop = {"type": "stop-snapshot", "data": {"data-collections": [], "type": "incremental"}}
            assert client.call("POST", signals, stop).status == 202

            assert conn.proc is not None
            kill_binlog_dump(mariadb.primary, reader_child(conn.proc.pid))
            until("debezium_metrics_NumberOfDisconnects > 0", "a disconnect")
            insert(mariadb, db, [5001])  # streamed after the reconnect
            until("debezium_metrics_TotalNumberOfEventsSeen{context=\"streaming\"} >= 31",
                  "the row after the reconnect")

            end = time.time()
            window = Window(min(start, end - 60), end, scrape_s=1.0)
            empty, zero = [], []
            for panel in dashboard["panels"]:
                answers = panel_series(prom, dashboard, panel, window)
                for target in panel["targets"]:
                    key = (panel["title"], target["legendFormat"])
                    series = answers[target["refId"]]
                    if not any(s.points for s in series):
                        empty.append(key)
                    elif not any(v for s in series for _, v in s.points) and \
                            key not in ZERO_IN_A_SHORT_RUN:
                        zero.append(key)
        assert conn.stop() == 0
    assert empty == [], f"targets with no data: {empty}"
    assert zero == [], f"targets only 0 though the workload moves them: {zero}"
    targets = {(p["title"], t["legendFormat"]) for p in dashboard["panels"] for t in p["targets"]}
    assert set(ZERO_IN_A_SHORT_RUN) <= targets  # the list names no target that is gone
