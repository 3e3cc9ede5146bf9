"""When a chunk or table read the replica refused is tried again, and when the table FAILS.

A lost connection (the replica restarting, the chunk reader process gone) is not the table's
fault: it is retried for as long as it lasts. A statement that failed and may succeed later
(a KILL QUERY, a statement time limit, a lock, a DDL the stream has not reached) is retried
READ_ATTEMPTS - 1 times with backoff. Anything else (SELECT denied on the table...) fails
the table at once: the same read would be refused again.
"""

from __future__ import annotations

import logging

from connector.snapshot.sql_errors import TRANSIENT_CODES, is_connection_code

log = logging.getLogger("gtidmark.snapshot")

READ_ATTEMPTS = 6  # a transient error: the first try and 5 more, over 15.5 s
FIRST_DELAY_S = 0.5
MAX_DELAY_S = 8.0


class ReadRetries:
    """Consecutive failed reads of the snapshot's head table."""

    __slots__ = ("failures", "table")

    def __init__(self) -> None:
        self.failures = 0
        self.table: str | None = None  # whose reads they are (a stopped table's do not count)

    def failed(self, code: int | None, table: str | None, reason: str) -> float | None:
        """One more failure with error `code` (`reason`) reading `table` (None: the list of
        captured tables, which never fails): seconds to wait before the next try, said in
        one line, or None when the table's snapshot fails."""
        if table != self.table:
            self.failures, self.table = 0, table
        self.failures += 1
        if code in TRANSIENT_CODES:
            retry = self.failures < READ_ATTEMPTS
        else:
            retry = is_connection_code(code)
        if not retry and table is not None:
            return None
        delay = min(MAX_DELAY_S, FIRST_DELAY_S * 2 ** (self.failures - 1)) if retry \
            else MAX_DELAY_S
        log.warning("snapshot chunk of %s failed (%s); try %d in %.1fs",
                    table or "the captured tables", reason, self.failures + 1, delay)
        return delay

    def succeeded(self) -> None:
        self.failures = 0

    def tries(self) -> str:
        """How many reads failed, for the FAILED line."""
        return f"{self.failures} {'try' if self.failures == 1 else 'tries'}"
