"""The catalog sessions are read on the engine thread: one found dead is replaced once, with
one line, instead of a table version going without its column defaults (the connector's
catalog) or a signal being skipped (the snapshot's catalog for signals)."""

from __future__ import annotations

import logging
from typing import Any, Self

import MySQLdb
import pymysql
import pytest

from connector.binlog.declared import DeclaredColumns
from connector.catalog import Catalog
from connector.flavours import MARIADB
from connector.settings.filters import TableFilter
from connector.snapshot.source import ChunkSource
from tests.unit.test_config import cfg


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


class SnapshotSession(Session):
    """The same, as the snapshot's mysqlclient session fails."""

    def execute(self, sql: str, params: Any = None) -> None:
        if self.dead:
            raise MySQLdb.OperationalError(2013, "Lost connection to server during query")

    def fetchall(self) -> list[tuple[str, str]]:
        return [("shop", "orders")]


def test_a_dead_signal_catalog_session_is_replaced_once_and_the_signal_acted_on(
        caplog: pytest.LogCaptureFixture) -> None:
    sessions = [SnapshotSession(dead=True), SnapshotSession(dead=False)]
    opened = iter(sessions)
    source = ChunkSource(lambda: next(opened), TableFilter(cfg()), MARIADB)
    with caplog.at_level(logging.WARNING):
        assert source.captured_tables() == ["shop.orders"]
    assert [r.getMessage() for r in caplog.records] == [
        ("snapshot catalog session lost (error 2013 (connection lost or silent past the read "
         "timeout)); reconnecting")]
