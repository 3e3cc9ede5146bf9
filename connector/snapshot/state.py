"""The incremental snapshot's state: which tables, how far, paused or not, how fast.

Debezium's IncrementalSnapshotContext: signal actions change it, the coordinator moves it
on chunk by chunk, and the offsets record carries it (`to_json`), so a restart resumes
the snapshot where the last committed chunk ended. Tables whose snapshot FAILED stay listed
(`failed`) until a snapshot of them runs again, so `gtidmark status` shows what is missing.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from connector.snapshot.progress import TableProgress


@dataclass(frozen=True, slots=True)
class FailedTable:
    """A table whose snapshot ended without all its rows sent: the replica kept refusing."""

    table: str
    reason: str  # error code and a fixed name (sql_errors.describe), never the server text
    snapshot: str | None  # the id of the snapshot it failed in
    at: float  # time.time()

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "reason": self.reason, "snapshot": self.snapshot,
                "at": round(self.at, 3)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FailedTable:
        snapshot = data.get("snapshot")
        return cls(table=str(data["table"]), reason=str(data.get("reason", "")),
                   snapshot=None if snapshot is None else str(snapshot),
                   at=float(data.get("at", 0.0)))


@dataclass(slots=True)
class SnapshotState:
    id: str | None = None
    tables: list[TableProgress] = field(default_factory=list)  # the queue; its head runs
    paused: bool = False
    # None only in a state translated from Debezium's offsets, which carry no throttle:
    # the coordinator then takes the configured values.
    chunk_size: int | None = None
    chunk_delay_ms: int | None = None
    initial: bool = False  # snapshot.mode=initial: every captured table, listed on first step
    failed: list[FailedTable] = field(default_factory=list)  # until snapshotted again

    @property
    def active(self) -> bool:
        """A snapshot runs (or waits, paused): the offsets carry the state."""
        return bool(self.tables) or self.initial

    def throttle(self, configured: tuple[int, int]) -> tuple[int, int]:
        """(chunk size, delay ms): the state's own, else the `configured` ones."""
        size = configured[0] if self.chunk_size is None else self.chunk_size
        delay = configured[1] if self.chunk_delay_ms is None else self.chunk_delay_ms
        return size, delay

    def saved(self) -> SnapshotState | None:
        """A copy for an offsets checkpoint (later chunks must not change a noted one), or
        None when no snapshot runs and none failed."""
        if not self.active and not self.failed:
            return None
        return dataclasses.replace(self, tables=[dataclasses.replace(t) for t in self.tables],
                                   failed=list(self.failed))

    def forget_failed(self, tables: set[str]) -> None:
        """`tables` are snapshotted again (or the user stopped them): no longer FAILED."""
        self.failed = [f for f in self.failed if f.table not in tables]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "paused": self.paused}
        if self.chunk_size is not None:
            data["chunk_size"] = self.chunk_size
        if self.chunk_delay_ms is not None:
            data["chunk_delay_ms"] = self.chunk_delay_ms
        data["initial"] = self.initial
        data["tables"] = [t.to_json() for t in self.tables]
        if self.failed:
            data["failed"] = [f.to_json() for f in self.failed]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SnapshotState:
        size, delay = data.get("chunk_size"), data.get("chunk_delay_ms")
        return cls(id=data.get("id"),
                   tables=[TableProgress.from_json(t) for t in data.get("tables", [])],
                   paused=bool(data.get("paused")),
                   chunk_size=None if size is None else int(size),
                   chunk_delay_ms=None if delay is None else int(delay),
                   initial=bool(data.get("initial")),
                   failed=[FailedTable.from_json(f) for f in data.get("failed", [])])

    def json_size(self) -> int:
        """Bytes this state takes in the offsets record."""
        return len(json.dumps(self.to_json(), separators=(",", ":")))
