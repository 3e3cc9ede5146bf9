"""Per-table snapshot progress: what goes into the offsets and what a person reads."""

from __future__ import annotations

import base64
import datetime
import decimal
import time
from dataclasses import dataclass, field
from typing import Any


def _value_to_json(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return {"double": repr(value)}  # exact: repr round-trips (see _LEGACY_FLOAT)
    if isinstance(value, bytes | bytearray):
        return {"b64": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    if isinstance(value, datetime.datetime):
        return {"datetime": value.isoformat()}
    if isinstance(value, datetime.date):
        return {"date": value.isoformat()}
    if isinstance(value, datetime.timedelta):
        return {"time_us": (value.days * 86_400 + value.seconds) * 1_000_000 +
                value.microseconds}
    raise TypeError(f"cannot store a {type(value).__name__} key value in the offsets")


# Earlier versions stored {"float": ...}: a FLOAT key as the server printed it, 6
# significant digits, so up to 5e-6 of its value away from the row's key either way. Read
# back, a last key moves down by more than that (the rows between are read again, never
# skipped) and a max key moves up (the table does not end before its last row).
_LEGACY_FLOAT = 1e-5


def _value_from_json(value: Any, widen: int = 0) -> Any:
    if not isinstance(value, dict):
        return value
    (kind, data), = value.items()
    if kind == "double":
        return float(data)
    if kind == "decimal":
        return decimal.Decimal(data)
    if kind == "b64":
        return base64.b64decode(data)
    if kind == "hex":  # written by earlier versions
        return bytes.fromhex(data)
    if kind == "float":
        number = float(data)
        return number + widen * _LEGACY_FLOAT * abs(number)
    if kind == "datetime":
        return datetime.datetime.fromisoformat(data)
    if kind == "date":
        return datetime.date.fromisoformat(data)
    if kind == "time_us":
        return datetime.timedelta(microseconds=int(data))
    raise ValueError(f"unknown stored key value kind {kind!r}")


def key_to_json(key: tuple[Any, ...] | None) -> list[Any] | None:
    """Key values tagged with their type, so a resumed chunk binds a DECIMAL as a number (not
    a string the server would compare as a double) and bytes, dates and times exactly."""
    return None if key is None else [_value_to_json(v) for v in key]


def key_from_json(values: list[Any] | None, widen: int = 0) -> tuple[Any, ...] | None:
    """The inverse of `key_to_json` (plain ints and strings are stored as themselves);
    `widen` -1 for a last key, +1 for a max key moves an earlier version's rounded FLOAT
    that way (`_LEGACY_FLOAT`)."""
    return None if values is None else tuple(_value_from_json(v, widen) for v in values)


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
                   last_key=key_from_json(data.get("last_key"), widen=-1),
                   max_key=key_from_json(data.get("max_key"), widen=1),
                   rows=int(data.get("rows", 0)),
                   estimate=int(data.get("estimate", 0)),
                   started=float(data.get("started", time.time())))

    def _rates(self, now: float | None) -> tuple[int, float, float, float | None]:
        """Total, percentage, rows/s and ETA in seconds (None while no row is read)."""
        now = time.time() if now is None else now
        rate = self.rows / max(now - self.started, 1e-6)
        total = max(self.estimate, self.rows)
        pct = 100.0 * self.rows / total if total else 100.0
        return total, pct, rate, (total - self.rows) / rate if rate > 0 else None

    def numbers(self, now: float | None = None) -> dict[str, Any]:
        """The progress as numbers, for `status --json` (describe's line is for people)."""
        total, pct, rate, eta = self._rates(now)
        return {"table": self.table, "rows": self.rows, "estimate": self.estimate,
                "total": total, "percent": round(pct, 1), "rows_per_s": round(rate, 1),
                "eta_s": None if eta is None else round(eta, 1),
                "started": round(self.started, 3), "condition": self.condition,
                "surrogate_key": self.surrogate_key}

    def describe(self, now: float | None = None) -> str:
        """One line: rows done of the estimate, percentage, rows/s, ETA."""
        total, pct, rate, eta = self._rates(now)
        eta_text = "?" if eta is None else f"{eta:.0f}s"
        return (f"{self.table}: {self.rows}/{total} rows ({pct:.1f}%), {rate:.0f} rows/s, "
                f"ETA {eta_text}")
