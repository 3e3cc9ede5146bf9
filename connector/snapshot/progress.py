"""Per-table snapshot progress: what goes into the offsets and what a person reads."""

from __future__ import annotations

import datetime
import decimal
import time
from dataclasses import dataclass, field
from typing import Any


def key_to_json(key: tuple[Any, ...] | None) -> list[Any] | None:
    """Primary-key values in a JSON-safe form that MySQL accepts back as query parameters."""
    if key is None:
        return None
    out: list[Any] = []
    for value in key:
        if isinstance(value, (int, float, str)) or value is None:
            out.append(value)
        elif isinstance(value, bytes):
            out.append({"hex": value.hex()})
        elif isinstance(value, (decimal.Decimal, datetime.date, datetime.timedelta)):
            out.append(str(value))
        else:
            out.append(str(value))
    return out


def key_from_json(values: list[Any] | None) -> tuple[Any, ...] | None:
    if values is None:
        return None
    return tuple(bytes.fromhex(v["hex"]) if isinstance(v, dict) else v for v in values)


@dataclass
class TableProgress:
    table: str                        # db.table
    condition: str | None = None
    surrogate_key: str | None = None
    last_key: tuple[Any, ...] | None = None
    max_key: tuple[Any, ...] | None = None
    rows: int = 0
    estimate: int = 0
    started: float = field(default_factory=time.time)

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "condition": self.condition,
                "surrogate_key": self.surrogate_key, "last_key": key_to_json(self.last_key),
                "max_key": key_to_json(self.max_key), "rows": self.rows,
                "estimate": self.estimate, "started": round(self.started, 3)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableProgress:
        return cls(table=data["table"], condition=data.get("condition"),
                   surrogate_key=data.get("surrogate_key"),
                   last_key=key_from_json(data.get("last_key")),
                   max_key=key_from_json(data.get("max_key")), rows=int(data.get("rows", 0)),
                   estimate=int(data.get("estimate", 0)),
                   started=float(data.get("started", time.time())))

    def describe(self, now: float | None = None) -> str:
        """One line: rows done of the estimate, percentage, rows/s, ETA."""
        now = time.time() if now is None else now
        elapsed = max(now - self.started, 1e-6)
        rate = self.rows / elapsed
        total = max(self.estimate, self.rows)
        pct = 100.0 * self.rows / total if total else 100.0
        eta = (total - self.rows) / rate if rate > 0 else float("inf")
        eta_text = "?" if eta == float("inf") else f"{eta:.0f}s"
        return (f"{self.table}: {self.rows}/{total} rows ({pct:.1f}%), {rate:.0f} rows/s, "
                f"ETA {eta_text}")
