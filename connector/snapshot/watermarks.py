"""Read-only low and high watermarks around a chunk SELECT.

Correctness rule: the low watermark must not be ahead of what the SELECT sees, and the
high watermark must not be behind it (SPEC section 6). Measured on MariaDB:
`@@gtid_binlog_pos` read *before* a SELECT can be ahead of it (the binlog is written
before the InnoDB commit is visible), while `@@gtid_slave_pos` is committed with the
replicated transaction itself. So: low = `@@gtid_slave_pos` before, high =
`@@gtid_binlog_pos` after. On a server that is not a replica gtid_slave_pos is empty:
the window then spans everything since the stream's start, which is wide but safe.
MySQL: `Executed_Gtid_Set` from SHOW MASTER STATUS (SHOW BINARY LOG STATUS on 8.4+)
before and after.
"""

from __future__ import annotations

from typing import Any, Literal

from connector.gtid import GtidSet, MariaDbGtidPos

Flavour = Literal["mysql", "mariadb"]


def read_low(cursor: Any, flavour: Flavour) -> MariaDbGtidPos | GtidSet:
    if flavour == "mariadb":
        cursor.execute("SELECT @@global.gtid_slave_pos")
        return MariaDbGtidPos.parse(str(cursor.fetchone()[0] or ""))
    return mysql_executed_set(cursor)


def read_high(cursor: Any, flavour: Flavour) -> MariaDbGtidPos | GtidSet:
    if flavour == "mariadb":
        cursor.execute("SELECT @@global.gtid_binlog_pos")
        return MariaDbGtidPos.parse(str(cursor.fetchone()[0] or ""))
    return mysql_executed_set(cursor)


def mysql_executed_set(cursor: Any) -> GtidSet:
    """Executed_Gtid_Set, trying the 8.4+ statement first, then the older one."""
    for statement in ("SHOW BINARY LOG STATUS", "SHOW MASTER STATUS"):
        try:
            cursor.execute(statement)
        except Exception:  # noqa: BLE001, S112 - the other spelling exists on this server
            continue
        names = [d[0].lower() for d in cursor.description]
        row = cursor.fetchone()
        if row is None:
            raise RuntimeError("binary logging is disabled on the source")
        return GtidSet.parse(str(row[names.index("executed_gtid_set")] or ""))
    raise RuntimeError("neither SHOW BINARY LOG STATUS nor SHOW MASTER STATUS is allowed")
