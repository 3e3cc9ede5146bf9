"""GET /metrics: Prometheus text with the names Debezium's Grafana dashboards query.

Debezium's MBeans reach Prometheus through jmx_exporter with Debezium's rules (the
debezium-examples monitoring config): `debezium.<plugin>:type=connector-metrics,
context=<context>,server=<topic.prefix>` attribute `A` becomes `debezium_metrics_A{plugin,
name, context}`, and `RowsScanned` gets a `table` label per table. Those are untyped gauges
with the attribute's own name (no `_total`), so they are gauges here too. Our own numbers
are `gtidmark_*`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, PlatformCollector, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from connector.control import EngineView
from connector.settings.model import ConnectorConfig

# Names Debezium's dashboards query that are not exported, and why (README "Metrics").
NOT_EXPORTED = {
    "NumberOfEventsSkipped": "no Debezium MBean has it (the generic dashboard's typo for "
                             "NumberOfSkippedEvents, which is exported)",
    "SecondsSinceLastEvent": "gone from Debezium 3.x; MilliSecondsSinceLastEvent replaces it",
    "SecondsBehindMaster": "gone from Debezium 3.x; MilliSecondsBehindSource replaces it",
    "NumberOfRolledBackTransactions": "Debezium counts it only in its binlog.buffer.size "
                                      "look-ahead buffer (off by default); gtidmark has none",
    "NumberOfNotWellFormedTransactions": "as NumberOfRolledBackTransactions",
    "NumberOfLargeTransactions": "as NumberOfRolledBackTransactions",
    "ChangesRecovered": "schema-history recovery: gtidmark reads table definitions from the "
                        "replica and never replays the history topic",
    "ChangesApplied": "as ChangesRecovered",
    "RecoveryStartTime": "as ChangesRecovered",
    "MilliSecondsSinceLastAppliedChange": "as ChangesRecovered",
    "MilliSecondsSinceLastRecoveredChange": "as ChangesRecovered",
}
STATES = ("UNASSIGNED", "RUNNING", "PAUSED", "STOPPED", "FAILED", "RESTARTING")


class EngineCollector(Collector):
    """Reads the latest published EngineView at each scrape; never touches the engine."""

    def __init__(self, config: ConnectorConfig, view: Callable[[], EngineView]) -> None:
        self._plugin = config.flavour
        self._name = config.topic_prefix
        self._connector = config.name
        self._view = view

    def _debezium(self, attribute: str, context: str, value: float,
                  doc: str) -> GaugeMetricFamily:
        family = GaugeMetricFamily(f"debezium_metrics_{attribute}", doc,
                                   labels=["plugin", "name", "context"])
        family.add_metric([self._plugin, self._name, context], value)
        return family

    def collect(self) -> Iterator[Metric]:
        view = self._view()
        snap = view.snapshot
        streaming = "streaming"
        yield self._debezium("MilliSecondsBehindSource", streaming, view.behind_source_ms,
                             "ms between the last applied transaction's commit on the source "
                             "and its processing (-1 before the first)")
        yield self._debezium("TotalNumberOfEventsSeen", streaming, view.events_seen,
                             "row change events applied")
        yield self._debezium("NumberOfCommittedTransactions", streaming,
                             view.committed_transactions, "transactions applied")
        yield self._debezium("Connected", streaming, 1 if view.connected else 0,
                             "1 while the binlog stream is connected")
        yield self._debezium("QueueTotalCapacity", streaming, view.queue_total,
                             "rows the reader may queue before it blocks")
        yield self._debezium("QueueRemainingCapacity", streaming, view.queue_remaining,
                             "rows the reader may still queue")
        last = view.last_event_at
        yield self._debezium("MilliSecondsSinceLastEvent", streaming,
                             -1 if last is None else int((time.monotonic() - last) * 1000),
                             "ms since the last transaction was taken from the binlog, filtered "
                             "or not (-1 before the first)")
        yield self._debezium("BinlogPosition", streaming, view.binlog_position,
                             "end of the last transaction applied, in its binlog file")
        yield self._debezium("IsGtidModeEnabled", streaming, 1,
                             "1: gtidmark always streams by GTID (the preflight requires it)")
        yield self._debezium("NumberOfDisconnects", streaming, view.disconnects,
                             "binlog connections lost (each one reconnected from the last GTID)")
        yield self._debezium("NumberOfEventsFiltered", streaming, view.events_filtered,
                             "binlog rows events of tables the include/exclude lists leave out")
        for attribute in ("NumberOfSkippedEvents", "NumberOfErroneousEvents"):
            yield self._debezium(attribute, streaming, view.events_skipped,
                                 "writes on captured tables that could not be emitted and were "
                                 "skipped (event.processing.failure.handling.mode=warn/skip)")
        context = "snapshot"
        yield self._debezium("SnapshotRunning", context, 1 if snap.running else 0,
                             "1 while an incremental snapshot runs")
        yield self._debezium("SnapshotPaused", context, 1 if snap.paused else 0,
                             "1 while an incremental snapshot is paused")
        yield self._debezium("RemainingTableCount", context, snap.remaining_tables,
                             "tables of the snapshot not finished yet")
        yield self._debezium("TotalTableCount", context, snap.total_tables,
                             "tables any incremental snapshot covered since the start")
        yield self._debezium("SnapshotCompleted", context, 1 if snap.completed else 0,
                             "1 once the last snapshot read its last table")
        yield self._debezium("SnapshotAborted", context, 1 if snap.aborted else 0,
                             "1 once a stop-snapshot signal ended the last snapshot")
        yield self._debezium("SnapshotDurationInSeconds", context, int(snap.duration_s),
                             "the last snapshot's start to end, or to now while it runs")
        yield self._debezium("HoldingGlobalLock", context, 0,
                             "0: gtidmark never takes a global read lock (chunks and watermarks)")
        yield self._debezium("ChunkId", context, snap.chunk,
                             "ordinal of the current chunk (Debezium's is a string id, which "
                             "jmx_exporter does not export)")
        yield self._debezium("TotalNumberOfEventsSeen", context, sum(snap.rows_scanned.values()),
                             "snapshot rows emitted")
        rows = GaugeMetricFamily("debezium_metrics_RowsScanned", "snapshot rows emitted per table",
                                 labels=["plugin", "name", "context", "table"])
        for table, count in sorted(snap.rows_scanned.items()):
            rows.add_metric([self._plugin, self._name, context, table], count)
        yield rows
        yield from self._own(view)

    def _own(self, view: EngineView) -> Iterator[Metric]:
        snap = view.snapshot
        labels = ["connector"]
        values = [self._connector]

        def gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
            family = GaugeMetricFamily(name, doc, labels=labels)
            family.add_metric(values, value)
            return family

        def counter(name: str, doc: str, value: float) -> CounterMetricFamily:
            family = CounterMetricFamily(name, doc, labels=labels)
            family.add_metric(values, value)
            return family

        yield gauge("gtidmark_snapshot_window_open_seconds",
                    "how long the current chunk's watermark window has been open",
                    snap.window_open_s)
        yield gauge("gtidmark_snapshot_failed_tables",
                    "tables whose snapshot FAILED (rows not all sent) and has not run again",
                    len(snap.failed))
        failed = GaugeMetricFamily("gtidmark_snapshot_table_failed",
                                   "1 for each table whose snapshot FAILED",
                                   labels=["connector", "table"])
        for table, _ in snap.failed:
            failed.add_metric([self._connector, table], 1)
        yield failed
        yield counter("gtidmark_snapshot_chunks_reselected",
                      "chunks selected again (low watermark behind the stream, or DDL)",
                      snap.chunks_reselected)
        yield counter("gtidmark_snapshot_window_rows_dropped",
                      "chunk rows dropped because a change event inside the window had them",
                      snap.rows_dropped)
        yield gauge("gtidmark_producer_queue_messages",
                    "records in the Kafka producer's queue", view.producer_queue)
        yield gauge("gtidmark_producer_acks_pending",
                    "records produced and not yet acknowledged by Kafka", view.acks_pending)
        yield gauge("gtidmark_offsets_commit_age_seconds",
                    "how long the oldest state not yet in the offsets topic has waited "
                    "(0: everything committed)", view.commit_age_s)
        state = GaugeMetricFamily("gtidmark_connector_state",
                                  "1 for the connector's current Kafka Connect state",
                                  labels=["connector", "state"])
        for name in STATES:
            state.add_metric([self._connector, name], 1 if view.state == name else 0)
        yield state


def registry(config: ConnectorConfig, view: Callable[[], EngineView]) -> CollectorRegistry:
    """The engine's metrics plus the process ones (CPU, memory, file descriptors)."""
    reg = CollectorRegistry(auto_describe=False)
    reg.register(EngineCollector(config, view))
    ProcessCollector(registry=reg)
    PlatformCollector(registry=reg)
    return reg
