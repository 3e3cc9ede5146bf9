"""The chunk SELECT names its columns (INVISIBLE ones too), a column gone since the table
was read is `ColumnsChanged`, not a table skipped for an SQL error, and no chunk is read
on a replica that has not applied the stream's position yet."""

from __future__ import annotations

from typing import Any, Self

import MySQLdb
import pytest

from connector.flavours import MARIADB, MYSQL
from connector.gtid import GtidSet, MariaDbGtidPos
from connector.snapshot.catch_up import wait_applied
from connector.snapshot.source import ChunkRequest, ColumnsChanged, SelectedChunk, select_chunk


class Cursor:
    """Watermark reads answer one position; the chunk SELECT answers `rows` or raises."""

    def __init__(self, rows: list[tuple[Any, ...]], error: Exception | None = None) -> None:
        self.rows, self.error, self.sql = rows, error, ""
        self._result: list[tuple[Any, ...]] = []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def execute(self, sql: str, params: Any = None) -> None:
        if "@@" in sql:
            self._result = [("0-1-5", 2) if "server_id" in sql else ("0-1-5",)]
            return
        self.sql = sql
        if self.error is not None:
            raise self.error
        self._result = self.rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._result

    def fetchone(self) -> tuple[Any, ...]:
        return self._result[0]


class Session:
    def __init__(self, cursor: Cursor) -> None:
        self._cursor = cursor

    def cursor(self) -> Cursor:
        return self._cursor

    def close(self) -> None:
        pass


REQUEST = ChunkRequest(number=7, table="d.t", columns=("id", "hidden", "v"),
                       key_columns=("id",), condition=None, after=None, limit=10,
                       encoding=None, streamed=MariaDbGtidPos.parse("0-1-5"))


def test_the_chunk_selects_every_column_by_name() -> None:
    cursor = Cursor([(1, 7, "a"), (2, 4, "b")])
    chunk = select_chunk(Session(cursor), REQUEST, MARIADB)
    assert "SELECT `id`, `hidden`, `v` FROM `d`.`t`" in cursor.sql
    assert isinstance(chunk, SelectedChunk)
    assert chunk.rows == {(1,): {"id": 1, "hidden": 7, "v": "a"},
                          (2,): {"id": 2, "hidden": 4, "v": "b"}}


def test_a_column_dropped_since_the_table_was_read_reads_it_again() -> None:
    gone = MySQLdb.OperationalError(1054, "Unknown column 'hidden' in 'field list'")
    assert select_chunk(Session(Cursor([], gone)), REQUEST, MARIADB) == ColumnsChanged(7)


def test_other_errors_are_raised() -> None:
    denied = MySQLdb.OperationalError(1142, "SELECT command denied")
    with pytest.raises(MySQLdb.OperationalError):
        select_chunk(Session(Cursor([], denied)), REQUEST, MARIADB)


def test_a_chunk_waits_until_the_replica_applied_the_streams_position(
        caplog: pytest.LogCaptureFixture) -> None:
    """A replica behind the offsets: no chunk is read until it has applied them."""
    src = "2174b383-5441-11e8-b90a-c80aa9429562"
    applied = iter([f"{src}:1-80", f"{src}:1-90", f"{src}:1-100"])

    class Executed(Cursor):
        def execute(self, sql: str, params: Any = None) -> None:
            if sql == "SELECT @@global.gtid_owned":
                self._result = [("",)]
                return
            assert sql == "SELECT @@global.gtid_executed"
            self._result = [(next(applied),)]

    slept: list[float] = []
    caplog.set_level("INFO", "gtidmark.snapshot")
    wait_applied(Session(Executed([])), MYSQL, GtidSet.parse(f"{src}:1-100"), slept.append)
    assert len(slept) == 2 and next(applied, None) is None
    lines = [r.getMessage() for r in caplog.records]
    assert f"has not applied {src}:81-100 of the stream's position" in lines[0]
    assert "applied the stream's position; snapshot chunks go on" in lines[-1]
