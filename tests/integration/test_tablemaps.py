"""Table maps parsed once per body (connector/binlog/tablemaps.py) decode as the library does."""

from __future__ import annotations

from typing import Any

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)

from connector.binlog import tablemaps
from tests.services import MariaDbPair

EVENTS = [TableMapEvent, WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent]


def _decoded(mariadb: MariaDbPair, start: str, db: str, server_id: int,
             **filters: Any) -> list[tuple[Any, ...]]:
    settings = mariadb.cdc_settings()
    settings["passwd"] = settings.pop("password")
    stream = BinLogStreamReader(settings, server_id=server_id, is_mariadb=True,
                                auto_position=start, blocking=False, only_events=EVENTS,
                                **filters)
    seen: list[tuple[Any, ...]] = []
    try:
        for event in stream:
            if isinstance(event, TableMapEvent):
                if event.schema == db:
                    seen.append(("map", event.table_id, event.table,
                                 [(c.name, c.type, getattr(c, "unsigned", None),
                                   getattr(c, "is_primary", None)) for c in event.columns]))
            elif event.schema == db:
                seen.append((type(event).__name__, event.table, event.rows))
    finally:
        stream.close()
    return seen


def test_cached_table_maps_decode_every_table_version_as_the_library(
        mariadb: MariaDbPair, unique_name: str) -> None:
    tablemaps.install()
    db = unique_name
    start = mariadb.replica.gtid_binlog_pos()
    p = mariadb.primary
    p.execute(f"CREATE DATABASE {db}")
    p.execute(f"CREATE TABLE {db}.a (id INT PRIMARY KEY, v VARCHAR(10), n DECIMAL(6,2))")
    p.execute(f"CREATE TABLE {db}.b (k VARCHAR(5) PRIMARY KEY, u INT UNSIGNED)")
    for i in range(30):
        p.execute(f"INSERT INTO {db}.a (id, v, n) VALUES ({i}, 'v{i}', {i}.25)")
        p.execute(f"INSERT INTO {db}.b VALUES ('k{i}', {i})")
        if i == 10:  # same table, new columns and types: a new body
            p.execute(f"ALTER TABLE {db}.a ADD COLUMN w INT UNSIGNED, MODIFY v VARCHAR(20)")
        if i == 20:  # same column count and types, another name
            p.execute(f"ALTER TABLE {db}.a RENAME COLUMN w TO x")
        if i % 3 == 0:
            p.execute(f"UPDATE {db}.a SET v = 'upd' WHERE id = {i}")
            p.execute(f"DELETE FROM {db}.b WHERE k = 'k{i}'")
    mariadb.wait_synced()

    cached = _decoded(mariadb, start, db, 9311)
    # A stream with a schema filter parses every table map in the library's own way.
    parsed = _decoded(mariadb, start, db, 9312, only_schemas=[db])
    assert len(cached) == len(parsed) > 150
    assert cached == parsed
    names = {tuple(c[0] for c in entry[3]) for entry in cached if entry[0] == "map"}
    assert ("id", "v", "n", "w") in names and ("id", "v", "n", "x") in names
    # Every table version was parsed once and then reused.
    assert sum(1 for key in tablemaps._parsed if db.encode() in key[0]) == 4
