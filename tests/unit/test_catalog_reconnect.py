"""The catalog session (column defaults, a database's charset) is read on the engine thread:
one found dead is replaced once, with one line, instead of the table version going without
its catalog details."""

from __future__ import annotations

import logging
from typing import Any, Self

import pymysql
import pytest

from connector.binlog.declared import DeclaredColumns
from connector.catalog import Catalog


class Session:
    """A replica session answering a charset, or dead (its read times out)."""

    def __init__(self, dead: bool) -> None:
        self.dead = dead
        self.closed = False

    def cursor(self) -> Self:
        return self

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def execute(self, sql: str, params: Any = None) -> None:
        if self.dead:
            raise pymysql.OperationalError(2013, "Lost connection to MySQL server during query")

    def fetchone(self) -> tuple[str]:
        return ("utf8mb4",)

    def close(self) -> None:
        self.closed = True


def test_a_dead_catalog_session_is_replaced_once_with_one_line(
        caplog: pytest.LogCaptureFixture) -> None:
    sessions = [Session(dead=True), Session(dead=False)]
    opened = iter(sessions)
    catalog = Catalog(lambda: next(opened), DeclaredColumns())
    with caplog.at_level(logging.WARNING):
        assert catalog.database_charset("shop") == "utf8mb4"
    assert sessions[0].closed
    assert [r.getMessage() for r in caplog.records] == [
        "catalog session lost (error 2013); reconnecting"]


def test_a_refused_query_is_not_retried() -> None:
    class Refusing(Session):
        def execute(self, sql: str, params: Any = None) -> None:
            raise pymysql.OperationalError(1142, "SELECT command denied")

    opened = iter([Refusing(dead=False)])
    catalog = Catalog(lambda: next(opened), DeclaredColumns())
    assert catalog.database_charset("shop") is None  # one session asked, no second opened
