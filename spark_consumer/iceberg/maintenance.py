"""Maintenance of the job's tables between its batches, so it never races the job's commits.

MERGE on merge-on-read tables leaves small data files and position delete files behind
every batch. On the --maintain-every/--maintain-interval schedule each table changed since
its last maintenance gets Iceberg's rewrite_data_files, rewrite_position_delete_files,
expire_snapshots (keeping the newest snapshot with the job's offsets, which resume reads)
and remove_orphan_files. A failure is one line and the job goes on.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

from spark_consumer.iceberg.maintenance_options import MaintenanceOptions
from spark_consumer.iceberg.offsets import OFFSETS_PROPERTY, iceberg_table
from spark_consumer.iceberg.tables import TableRef, literal, quote

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FileCounts:
    """Data and delete files of a table's current snapshot, and its snapshots."""

    data: int
    deletes: int
    snapshots: int


def file_counts(table: Any) -> FileCounts:
    """From the current snapshot's summary totals (no scan)."""
    snapshot = table.currentSnapshot()
    summary = snapshot.summary() if snapshot is not None else None

    def total(key: str) -> int:
        return int(summary.get(key) or 0) if summary is not None else 0

    return FileCounts(total("total-data-files"), total("total-delete-files"),
                      int(table.snapshots().size()))


def offsets_depth(table: Any) -> int | None:
    """How many snapshots, from the current one back, reach the newest with our offsets."""
    snapshot, depth = table.currentSnapshot(), 1
    while snapshot is not None:
        if snapshot.summary().containsKey(OFFSETS_PROPERTY):
            return depth
        parent = snapshot.parentId()
        snapshot = table.snapshot(parent) if parent is not None else None
        depth += 1
    return None


def _timestamp(seconds: float) -> str:
    """A Spark TIMESTAMP literal in UTC, whatever the session time zone."""
    moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
    return f"TIMESTAMP '{moment.isoformat(timespec='milliseconds')}'"


class Maintenance:
    """Runs when the schedule says so, on the tables changed since their last maintenance."""

    def __init__(self, spark: SparkSession, options: MaintenanceOptions) -> None:
        self.spark = spark
        self.options = options
        self._batches = 0  # the job's batch count at the last maintenance
        self._at = time.monotonic()
        self._done: dict[TableRef, int] = {}  # snapshot id a table had after its maintenance

    def due(self, batches: int) -> bool:
        if batches <= self._batches:
            return False
        every, interval = self.options.every, self.options.interval
        return ((every > 0 and batches - self._batches >= every)
                or (interval > 0 and time.monotonic() - self._at >= interval * 60))

    def run_if_due(self, batches: int, tables: Mapping[TableRef, object | None]) -> None:
        """Between batches: maintain every existing table if the schedule says so."""
        if not self.due(batches):
            return
        self._batches, self._at = batches, time.monotonic()
        for ref in sorted((r for r, s in tables.items() if s is not None), key=str):
            self.maintain(ref)

    def maintain(self, ref: TableRef) -> None:
        """One table; one line whatever happens, and never an exception."""
        began = time.monotonic()
        try:
            table = iceberg_table(self.spark, str(ref))
            snapshot = table.currentSnapshot()
            if snapshot is None or self._done.get(ref) == snapshot.snapshotId():
                return
            before = file_counts(table)
            orphans = self._procedures(ref, table)
            table.refresh()
            after = file_counts(table)
            self._done[ref] = table.currentSnapshot().snapshotId()
        except Exception as exc:  # noqa: BLE001 - maintenance must not stop the job
            first = (str(exc).strip().splitlines() or ["(no message)"])[0][:300]
            log.warning("table %s: maintenance failed, the job goes on (tried again at the "
                        "next scheduled run): %s: %s", ref, type(exc).__name__, first)
            return
        log.info("table %s maintained in %.1f s: data files %d -> %d, delete files %d -> %d, "
                 "snapshots %d -> %d, %d orphan files removed", ref, time.monotonic() - began,
                 before.data, after.data, before.deletes, after.deletes, before.snapshots,
                 after.snapshots, orphans)

    def _procedures(self, ref: TableRef, table: Any) -> int:
        """The four procedures; returns the number of orphan files removed."""
        name = literal(f"{quote(ref.namespace)}.{quote(ref.name)}")
        call = f"CALL {quote(ref.catalog)}.system"
        self.spark.sql(f"{call}.rewrite_data_files(table => {name}, "
                       f"options => map('remove-dangling-deletes', 'true'))").collect()
        # Delete files of rewritten data files stay behind until rewritten themselves, and
        # the default picks only groups of 5 or more: all, so none is left dangling.
        self.spark.sql(f"{call}.rewrite_position_delete_files(table => {name}, "
                       f"options => map('rewrite-all', 'true'))").collect()
        table.refresh()
        keep = offsets_depth(table)
        if keep is not None:  # else resume has no offsets to lose, or lost them already
            older = time.time() - self.options.snapshot_hours * 3600
            self.spark.sql(f"{call}.expire_snapshots(table => {name}, older_than => "
                           f"{_timestamp(older)}, retain_last => {keep})").collect()
        older = time.time() - self.options.orphan_hours * 3600
        return len(self.spark.sql(f"{call}.remove_orphan_files(table => {name}, older_than => "
                                  f"{_timestamp(older)})").collect())
