"""The progress lines of one micro-batch: one for the batch, one per table after its commit."""

from __future__ import annotations

from dataclasses import dataclass, field

from spark_consumer.reading.reader import RangeStats


def changes_merged(meta: list[object]) -> int:
    """Keys the MERGE applies: the last change per key of every range."""
    return sum(m.upserts + m.deletes for m in meta if isinstance(m, RangeStats))


@dataclass
class TableProgress:
    """One table's part of a batch: records read, applied (neither tombstone nor bad, in a
    batch the table took), dead-lettered, lag and how long its commit took."""

    table: str
    records: int
    applied: int
    dead_lettered: int
    lag_records: int
    lag_seconds: float | None
    commit_seconds: float

    def line(self, number: int) -> str:
        age = "?" if self.lag_seconds is None else f"{self.lag_seconds:.1f}"
        return (f"batch {number} table {self.table}: {self.records} records, {self.applied} "
                f"applied, {self.dead_lettered} dead-lettered, lag {self.lag_records} records "
                f"/ {age} s, commit {self.commit_seconds:.1f} s")


@dataclass
class BatchResult:
    """Progress of one micro-batch: its line and its tables'."""

    records: int = 0
    tombstones: int = 0
    bad: int = 0
    keys: dict[str, int] = field(default_factory=dict)
    lag: int = 0
    seconds: float = 0.0
    tables: list[TableProgress] = field(default_factory=list)

    def line(self, number: int) -> str:
        tables = ", ".join(f"{t}={n}" for t, n in sorted(self.keys.items())) or "none"
        return (f"batch {number}: read {self.records} records ({self.tombstones} tombstones, "
                f"{self.bad} bad); keys merged per table: {tables}; lag {self.lag} offsets; "
                f"{self.seconds:.1f}s")

    def lines(self, number: int) -> list[str]:
        return [self.line(number), *(t.line(number) for t in self.tables)]

    def add(self, table: str, meta: list[object], bad: int, merged: bool,
            lag: tuple[int, float | None] = (0, None), commit_seconds: float = 0.0) -> None:
        """One table's part of the batch: its tasks' side results, bad records, lag in
        records and seconds, and its commit time."""
        stats = [m for m in meta if isinstance(m, RangeStats)]
        records, tombstones = sum(s.records for s in stats), sum(s.tombstones for s in stats)
        self.records += records
        self.tombstones += tombstones
        self.bad += bad
        if merged:
            self.keys[table] = changes_merged(meta)
        applied = records - tombstones - bad if merged else 0
        self.tables.append(TableProgress(table, records, applied, bad, lag[0], lag[1],
                                         commit_seconds))
