"""An execute-snapshot signal turned into queued tables, every refusal gathered into one line.

Offsets carry the queue (tables, their filters, keys), so the queue a signal may add is
bounded: a signal whose tables would make the stored snapshot state larger than
MAX_STATE_BYTES is refused, and the offsets record stays far below a broker's 1 MB limit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from connector.snapshot.progress import TableProgress
from signals.models import ExecuteSnapshot
from signals.patterns import MatchBudget, collection_matches

MAX_STATE_BYTES = 256 * 1024


@dataclass
class SnapshotPlan:
    """Tables to queue and the reasons others were not (one log line in all)."""

    added: list[TableProgress] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = []
        if self.added:
            parts.append("queued " + ", ".join(t.table for t in self.added))
        parts += self.problems
        return "; ".join(parts) or "nothing to do"


def plan_snapshot(signal: ExecuteSnapshot, captured: list[str], queued: set[str],
                  check_condition: Callable[[str, str], str | None]) -> SnapshotPlan:
    """Match the signal's patterns against `captured`; `check_condition(table, filter)`
    returns None when the filter may run on that table, else the reason it may not.

    Raises signals.patterns.PatternTooSlow for a pattern that backtracks too long.
    """
    plan = SnapshotPlan()
    seen = set(queued)
    budget = MatchBudget()
    for pattern in signal.data_collections:
        matches = [t for t in captured if collection_matches(pattern, t, budget)]
        if not matches:
            plan.problems.append(f"{pattern[:100]!r} matches no captured table")
        for table in matches:
            if table in seen:
                if table in queued:
                    plan.problems.append(f"{table} is already queued")
                continue
            seen.add(table)
            condition = signal.condition_for(table, budget)
            if condition is not None:
                reason = check_condition(table, condition)
                if reason is not None:
                    plan.problems.append(f"filter for {table} refused ({reason}); "
                                         "table skipped")
                    continue
            plan.added.append(TableProgress(table=table, condition=condition,
                                            surrogate_key=signal.surrogate_key))
    return plan
