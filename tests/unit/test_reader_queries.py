"""How the reader's query events open, join and end a transaction (frames made up, no server)."""

from __future__ import annotations

from typing import Any

import pytest

from connector.binlog.framing import GTID, QUERY, XA_PREPARE, XID
from connector.binlog.queue import ChangeQueue
from connector.binlog.reader import BinlogReader
from connector.binlog.transactions import Transaction
from connector.flavours import MARIADB, MYSQL
from connector.gtid import GtidSet, MariaDbGtidPos, MariaGtid, MysqlGtid

FLAVOURS = ["mariadb", "mysql"]
XID_TEXT = "X'61',X'',1"


def handed_over(flavour: str, frames: list[tuple[Any, ...]], flags: int = 0) -> list[Transaction]:
    """What the reader hands over for one GTID event (MariaDB's `flags`; MySQL has none),
    then `frames`."""
    mysql = flavour == "mysql"
    gtid = MysqlGtid.parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1") if mysql else \
        MariaGtid(0, 1, 1)
    start = (GTID, 100, 0, 1, gtid, None if mysql else flags, 90)
    out: ChangeQueue[Transaction] = ChangeQueue()
    reader = BinlogReader({}, 1, MYSQL if mysql else MARIADB,
                          GtidSet() if mysql else MariaDbGtidPos(), out,
                          framing=lambda stream, schema_of: iter([start, *frames]))
    reader._open = lambda: None  # type: ignore[method-assign]
    reader._stream_once()
    return out.take(0)


def query(text: str, thread: int, pos: int) -> tuple[Any, ...]:
    return QUERY, pos, thread, "d", text, pos - 10


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_statement_inside_begin_is_a_gap_of_the_transaction_with_the_begins_thread(
        flavour: str) -> None:
    (tx,) = handed_over(flavour, [query("BEGIN", 7, 110),
                                  query("INSERT INTO t VALUES (1)", 9, 120), (XID, 130)])
    assert (tx.thread, tx.ddl, tx.end_pos) == (7, None, 130)
    assert [gap.tables for gap in tx.gaps] == [(("d", "t"),)]


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_commit_ends_a_transaction_of_statements(flavour: str) -> None:
    (tx,) = handed_over(flavour, [query("BEGIN", 7, 110), query("DELETE FROM t", 7, 120),
                                  query("COMMIT", 7, 130), (XID, 140)])
    assert (tx.thread, tx.end_pos) == (7, 130)
    assert [gap.tables for gap in tx.gaps] == [(("d", "t"),)]


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_xa_start_opens_a_group_its_prepare_holds(flavour: str) -> None:
    (tx,) = handed_over(flavour, [query(f"XA START {XID_TEXT}", 7, 110),
                                  query(f"XA END {XID_TEXT}", 7, 120),
                                  (XA_PREPARE, 130, False, (1, b"a", b""))], flags=0x40)
    assert (tx.thread, tx.ddl, tx.gaps, tx.end_pos) == (7, None, (), 130)
    assert tx.hold is not None


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_statement_without_begin_is_a_group_of_its_own(flavour: str) -> None:
    (tx,) = handed_over(flavour, [query("CREATE TABLE t (a INT)", 7, 110)], flags=1)
    assert (tx.thread, tx.ddl, tx.gaps, tx.end_pos) == (7, "CREATE TABLE t (a INT)", (), 110)
