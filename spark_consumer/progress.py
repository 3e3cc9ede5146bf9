"""The progress line of one micro-batch."""

from __future__ import annotations

from dataclasses import dataclass, field

from spark_consumer.reader import RangeStats


def changes_merged(meta: list[object]) -> int:
    """Keys the MERGE applies: the last change per key of every range."""
    return sum(m.upserts + m.deletes for m in meta if isinstance(m, RangeStats))


@dataclass
class BatchResult:
    """Progress of one micro-batch, logged as one line."""

    records: int = 0
    tombstones: int = 0
    bad: int = 0
    keys: dict[str, int] = field(default_factory=dict)
    lag: int = 0
    seconds: float = 0.0

    def line(self, number: int) -> str:
        tables = ", ".join(f"{t}={n}" for t, n in sorted(self.keys.items())) or "none"
        return (f"batch {number}: read {self.records} records ({self.tombstones} tombstones, "
                f"{self.bad} bad); keys merged per table: {tables}; lag {self.lag} offsets; "
                f"{self.seconds:.1f}s")

    def add(self, table: str, meta: list[object], bad: int, merged: bool) -> None:
        """One table's part of the batch: its tasks' side results and bad records."""
        stats = [m for m in meta if isinstance(m, RangeStats)]
        self.records += sum(s.records for s in stats)
        self.tombstones += sum(s.tombstones for s in stats)
        self.bad += bad
        if merged:
            self.keys[table] = changes_merged(meta)
