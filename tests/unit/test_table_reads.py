"""A table's chunking as the chunk reader reads it: a largest key the server times out under
the snapshot's filter ends the snapshot at the table's largest key instead of skipping it;
the answer goes to the table it was asked for."""

from __future__ import annotations

from typing import Any, Self

import MySQLdb
import pytest

from connector.flavours import MARIADB
from connector.gtid import MariaDbGtidPos
from connector.schema import Column, TableSchema
from connector.settings.parse import parse_config
from connector.snapshot.coordinator import SnapshotCoordinator
from connector.snapshot.progress import TableProgress
from connector.snapshot.state import SnapshotState
from connector.snapshot.table_reads import TableRead, TableRequest
from connector.snapshot.tables import ChunkedTable, measure
from tests.unit.test_config import doc

SCHEMA = TableSchema("d", "t", (Column("id", "int", nullable=False), Column("v", "int")),
                     ("id",))


class SlowFilterCursor:
    """A server whose largest-key SELECT under a WHERE runs past its time limit."""

    def __init__(self, slow: str = " WHERE ") -> None:
        self.slow = slow  # what in a SELECT makes it time out
        self.statements: list[str] = []
        self._row: tuple[Any, ...] | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def execute(self, sql: str, params: Any = None) -> None:
        self.statements.append(sql)
        if "TABLE_ROWS" in sql:
            self._row = (1000,)
        elif self.slow in sql:
            raise MySQLdb.OperationalError(1969, "Query execution was interrupted")
        else:
            self._row = (99,)

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._row


class Server:
    def __init__(self, slow: str = " WHERE ") -> None:
        self.cur = SlowFilterCursor(slow)

    def cursor(self) -> SlowFilterCursor:
        return self.cur

    def close(self) -> None:
        pass


def table(condition: tuple[str, list[Any]] | None) -> ChunkedTable:
    return ChunkedTable(SCHEMA, ("id",), condition, lambda row: (row["id"],))


def test_a_filtered_largest_key_past_the_time_limit_falls_back_to_the_tables() -> None:
    server = Server()
    assert measure(server, "d.t", table(("`v` > %s", [5])), MARIADB) == ((99,), 1000)
    filtered, whole = server.cur.statements[:2]
    assert "WHERE (`v` > %s)" in filtered and "WHERE" not in whole


def test_an_unfiltered_largest_key_past_the_time_limit_is_still_an_error() -> None:
    server = Server(slow="DESC")
    with pytest.raises(MySQLdb.OperationalError):
        measure(server, "d.t", table(None), MARIADB)


class HeldReader:
    """The chunk reader process, answering only what the test hands it."""

    def __init__(self) -> None:
        self.requests: list[Any] = []
        self.answers: list[Any] = []

    def request(self, request: Any) -> None:
        self.requests.append(request)

    def has_answer(self) -> bool:
        return bool(self.answers)

    def answer(self) -> Any:
        return self.answers.pop(0) if self.answers else None

    def close(self) -> None:
        pass


def test_a_table_read_for_a_table_stopped_meanwhile_is_not_given_to_the_next() -> None:
    reader = HeldReader()
    snap = SnapshotCoordinator(parse_config(doc()), None, reader,  # type: ignore[arg-type]
                               lambda _: None, lambda *_: pytest.fail("nothing to emit"))
    snap.restore(SnapshotState(id="s", tables=[TableProgress(table="d.a"),
                                               TableProgress(table="d.b")]))
    at = MariaDbGtidPos.parse("0-1-10")
    snap.step(at, caught_up=True)
    asked = reader.requests[0]
    assert isinstance(asked, TableRequest) and asked.progress.table == "d.a" and asked.measure
    snap.state.tables.pop(0)  # what a stop-snapshot of d.a does, while its read is pending
    reader.answers.append(TableRead(asked.number, SCHEMA, ("id",), None, (), ((9,), 9)))
    snap.step(at, caught_up=True)
    snap.step(at, caught_up=True)
    assert snap.state.tables[0].max_key is None  # d.a's largest key is not d.b's
    assert [r.progress.table for r in reader.requests] == ["d.a", "d.b"]
