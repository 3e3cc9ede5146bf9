"""Every name Debezium's Grafana dashboards query is served by /metrics or listed as not."""

from __future__ import annotations

import time
from pathlib import Path

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from connector.control import EngineView
from connector.rest.metrics import NOT_EXPORTED, registry
from connector.settings.parse import parse_config
from connector.snapshot.meter import SnapshotMeter
from connector.snapshot.progress import TableProgress
from connector.snapshot.state import SnapshotState

# The debezium_metrics_* names the expressions of debezium/debezium-examples
# monitoring/debezium-grafana/debezium-dashboard.json and
# debezium-mysql-connector-dashboard.json query.
GENERIC_DASHBOARD = {
    "Connected", "MilliSecondsSinceLastEvent", "NumberOfEventsSkipped", "RemainingTableCount",
    "RowsScanned", "SnapshotAborted", "SnapshotCompleted", "SnapshotRunning",
    "TotalNumberOfEventsSeen", "TotalTableCount"}
MYSQL_DASHBOARD = {
    "BinlogPosition", "ChangesApplied", "ChangesRecovered", "Connected", "HoldingGlobalLock",
    "IsGtidModeEnabled", "MilliSecondsBehindSource", "MilliSecondsSinceLastAppliedChange",
    "MilliSecondsSinceLastEvent", "MilliSecondsSinceLastRecoveredChange",
    "NumberOfCommittedTransactions", "NumberOfDisconnects", "NumberOfErroneousEvents",
    "NumberOfEventsFiltered", "NumberOfLargeTransactions", "NumberOfNotWellFormedTransactions",
    "NumberOfRolledBackTransactions", "NumberOfSkippedEvents", "QueueRemainingCapacity",
    "QueueTotalCapacity", "RecoveryStartTime", "RemainingTableCount", "SecondsBehindMaster",
    "SecondsSinceLastEvent", "SnapshotAborted", "SnapshotCompleted", "SnapshotDurationInSeconds",
    "SnapshotRunning", "TotalNumberOfEventsSeen", "TotalTableCount"}

CONFIG = parse_config({"name": "shop-connector", "config": {
    "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
    "database.hostname": "replica", "database.user": "cdc", "database.password": "pw",
    "database.server.id": "5400", "topic.prefix": "shop", "bootstrap.servers": "kafka:9092"}})


def exported(view: EngineView) -> set[str]:
    text = generate_latest(registry(CONFIG, lambda: view)).decode()
    prefix = "debezium_metrics_"
    return {f.name[len(prefix):] for f in text_string_to_metric_families(text)
            if f.name.startswith(prefix)}


def test_every_dashboard_name_is_exported_or_documented_as_not() -> None:
    served = exported(EngineView(state="RUNNING"))
    missing = (GENERIC_DASHBOARD | MYSQL_DASHBOARD) - served - set(NOT_EXPORTED)
    assert not missing
    assert not served & set(NOT_EXPORTED)
    readme = Path(__file__).resolve().parents[2].joinpath("README.md").read_text()
    assert all(f"`{name}`" in readme for name in NOT_EXPORTED)


def test_milliseconds_since_last_event_is_minus_one_before_any_then_the_age() -> None:
    def value(view: EngineView) -> float:
        text = generate_latest(registry(CONFIG, lambda: view)).decode()
        return next(s.value for f in text_string_to_metric_families(text) for s in f.samples
                    if s.name == "debezium_metrics_MilliSecondsSinceLastEvent")

    assert value(EngineView(state="RUNNING")) == -1
    assert 2000 <= value(EngineView(state="RUNNING", last_event_at=time.monotonic() - 2)) < 3000


def test_snapshot_meter_follows_debeziums_lifecycle() -> None:
    meter, state = SnapshotMeter(), SnapshotState()
    assert meter.duration_s() == 0 and not meter.completed and not meter.aborted
    state.tables = [TableProgress(table="db.a"), TableProgress(table="db.b")]
    meter.observe(state)
    assert meter.running and meter.tables == {"db.a", "db.b"}
    state.tables = []
    meter.finished()
    assert meter.completed and not meter.aborted and not meter.running
    state.tables = [TableProgress(table="db.c")]
    meter.observe(state)  # a new snapshot clears the flags; the table count only grows
    assert not meter.completed and len(meter.tables) == 3
    state.tables = []
    meter.observe(state)  # a stop signal emptied it
    assert meter.aborted and not meter.completed and meter.duration_s() >= 0
