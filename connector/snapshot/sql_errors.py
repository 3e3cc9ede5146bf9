"""Server errors of snapshot queries, described by code only.

A server message can quote data (an `extractvalue()` error echoes its argument), so the
snapshot's log lines carry the error number and a fixed name, never the server's text.
"""

from __future__ import annotations

# Codes that mean the connection, not the query, failed: retry with a new connection.
_LOCKS = frozenset({1205, 1213})  # lock wait timeout, deadlock
_CONNECTION_CODES = frozenset({1040, 1053, 1152, 1153, 1158, 1159, 1160, 1161, 1927,
                               4031}) | _LOCKS
# The server aborted a statement at its time limit (MariaDB's max_statement_time, MySQL's
# MAX_EXECUTION_TIME).
STATEMENT_TIMEOUTS = frozenset({1969, 3024})
UNKNOWN_COLUMN = 1054  # a SELECT names a column the table no longer has
# The statement, not the table, failed: killed (KILL QUERY), timed out, a lock, the table
# redefined, altered or dropped on the replica before the stream reached that DDL. The same
# read may succeed a moment later.
TRANSIENT_CODES = frozenset({1317, 1412, UNKNOWN_COLUMN, 1146}) | STATEMENT_TIMEOUTS | _LOCKS
_NAMES = {
    1969: "statement timeout (max_statement_time)", 3024: "statement timeout",
    1317: "query interrupted", 1205: "lock wait timeout", 1213: "deadlock",
    1412: "table definition changed", 1146: "table does not exist", 1049: "unknown database",
    1054: "unknown column", 1142: "SELECT denied", 1143: "SELECT denied on a column",
    1064: "syntax error", 1292: "invalid value in the filter",
    1366: "invalid value in the filter", 1690: "value out of range",
    2006: "server gone", 2013: "connection lost or silent past the read timeout",
}


def error_code(exc: BaseException) -> int | None:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def is_connection_error(exc: BaseException) -> bool:
    """Client-side (2000-2999), network and lock-wait errors: the same query may succeed."""
    return is_connection_code(error_code(exc))


def is_connection_code(code: int | None) -> bool:
    """`is_connection_error` by code (None: not a server error, the process or the link)."""
    return code is None or 2000 <= code < 3000 or code in _CONNECTION_CODES


def describe(exc: BaseException) -> str:
    """`error 1969 (statement timeout ...)`: code and a fixed name, never the server text."""
    code = error_code(exc)
    if code is None:
        return type(exc).__name__
    name = _NAMES.get(code)
    return f"error {code}" + (f" ({name})" if name else "")
