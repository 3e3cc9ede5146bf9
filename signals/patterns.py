"""`data-collections` patterns matched in bounded time: catastrophic backtracking cannot hang us.

Debezium treats a data collection as an exact `db.table` or a regular expression that must
match the whole name. Python's `re` has no time limit, so a pattern such as `(a+)+$` could
stall the streaming thread for hours on one table name. Patterns are compiled with the
`regex` module (the same syntax) and every match carries a timeout; a pattern that runs
out of time, or a signal whose matches together take over SIGNAL_BUDGET_S, raises
`PatternTooSlow` and the signal carrying it is skipped. Compiling has no timeout, so what a
pattern may ask of the compiler is checked first (`pattern_limits`).
"""

from __future__ import annotations

import functools
import time

import regex

from signals.pattern_limits import check_pattern

MAX_PATTERN_CHARS = 256
MATCH_TIMEOUT_S = 0.05
SIGNAL_BUDGET_S = 0.5


class PatternTooSlow(ValueError):
    """A pattern took longer than MATCH_TIMEOUT_S to match one table name."""


@functools.lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """The compiled pattern; raises ValueError for a bad, over-long or too costly one."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(f"pattern is longer than {MAX_PATTERN_CHARS} characters")
    check_pattern(pattern)
    try:
        return regex.compile(pattern)
    except (regex.error, OverflowError, RecursionError) as exc:
        raise ValueError(f"{pattern[:100]!r} is not a valid regular expression "
                         f"({exc})") from None


class MatchBudget:
    """The time all pattern matches of one signal may take together: many matches each just
    under MATCH_TIMEOUT_S must not add up to minutes."""

    def __init__(self, seconds: float = SIGNAL_BUDGET_S) -> None:
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds

    def timeout(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise PatternTooSlow(f"matching this signal's patterns took over "
                                 f"{self.seconds * 1000:.0f} ms")
        return min(MATCH_TIMEOUT_S, left)


def collection_matches(pattern: str, table: str, budget: MatchBudget | None = None) -> bool:
    """Debezium semantics: an exact `db.table`, or a regex matching the whole name."""
    if pattern == table:
        return True
    try:
        compiled = compile_pattern(pattern)
    except ValueError:
        return False
    timeout = MATCH_TIMEOUT_S if budget is None else budget.timeout()
    try:
        return compiled.fullmatch(table, timeout=timeout) is not None
    except TimeoutError:
        raise PatternTooSlow(f"pattern {pattern[:100]!r} took over "
                             f"{timeout * 1000:.0f} ms to match {table[:130]!r} "
                             "(catastrophic backtracking?)") from None
