"""The reader's row-image decoders (connector/binlog/rowimages.py) against mysql-replication.

Random rows of every supported column type are written on the primary, inserted, updated
and deleted; each rows event from the replica's binlog is decoded by both, and the values
(types and representations included) must be the same.
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
from decimal import Decimal
from typing import Any

import pymysql
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)

from connector.binlog.row_changes import _image
from connector.binlog.rowimages import fast_rows
from connector.flavours import flavour_named
from tests.connector_tools import SourcePair
from tests.mysql_services import MySqlPair
from tests.services import MariaDbPair

UTF8 = "CHARACTER SET utf8mb4"
COLUMNS: dict[str, tuple[str, st.SearchStrategy[Any]]] = {
    "ti": ("TINYINT", st.integers(-128, 127)),
    "tiu": ("TINYINT UNSIGNED", st.integers(0, 255)),
    "si": ("SMALLINT", st.integers(-(2**15), 2**15 - 1)),
    "siu": ("SMALLINT UNSIGNED", st.integers(0, 2**16 - 1)),
    "mi": ("MEDIUMINT", st.integers(-(2**23), 2**23 - 1)),
    "miu": ("MEDIUMINT UNSIGNED", st.integers(0, 2**24 - 1)),
    "i": ("INT", st.integers(-(2**31), 2**31 - 1)),
    "iu": ("INT UNSIGNED", st.integers(0, 2**32 - 1)),
    "bi": ("BIGINT", st.integers(-(2**63), 2**63 - 1)),
    "biu": ("BIGINT UNSIGNED", st.integers(0, 2**64 - 1)),
    "f": ("FLOAT", st.floats(width=32, allow_nan=False, allow_infinity=False)),
    "d": ("DOUBLE", st.floats(allow_nan=False, allow_infinity=False)),
    "n1": ("DECIMAL(5,2)", st.decimals(Decimal("-999.99"), Decimal("999.99"), places=2)),
    "n2": ("DECIMAL(30,10)", st.decimals(Decimal("-1e20") + 1, Decimal("1e20") - 1, places=10)),
    "n3": ("DECIMAL(12,0)", st.decimals(Decimal(-(10**12) + 1), Decimal(10**12 - 1), places=0)),
    "n4": ("DECIMAL(19,19)", st.decimals(Decimal("-0.9999999999999999999"),
                                         Decimal("0.9999999999999999999"), places=19)),
    "c": (f"CHAR(4) {UTF8}", st.text(st.characters(codec="utf-8"), max_size=4)),
    "vc": (f"VARCHAR(300) {UTF8}", st.text(st.characters(codec="utf-8"), max_size=300)),
    "vl": ("VARCHAR(20) CHARACTER SET latin1", st.text(st.characters(codec="cp1252"),
                                                        max_size=20)),
    "bn": ("BINARY(3)", st.binary(max_size=3)),
    "vb": ("VARBINARY(10)", st.binary(max_size=10)),
    "tx": (f"TEXT {UTF8}", st.text(max_size=50)),
    "mt": (f"MEDIUMTEXT {UTF8}", st.text(max_size=50)),
    "bl": ("BLOB", st.binary(max_size=300)),
    "dd": ("DATE", st.dates(dt.date(1000, 1, 1)) | st.just("0000-00-00")),
    "dt0": ("DATETIME", st.datetimes(dt.datetime(1000, 1, 1)) | st.just("0000-00-00 00:00:00")),
    "dt3": ("DATETIME(3)", st.datetimes(dt.datetime(1000, 1, 1))),
    "dt5": ("DATETIME(5)", st.datetimes(dt.datetime(1000, 1, 1))),
    "dt6": ("DATETIME(6)", st.datetimes(dt.datetime(1000, 1, 1))),
    "ts0": ("TIMESTAMP NULL", st.datetimes(dt.datetime(1970, 1, 2), dt.datetime(2038, 1, 18))),
    "ts1": ("TIMESTAMP(1) NULL", st.datetimes(dt.datetime(1970, 1, 2), dt.datetime(2038, 1, 18))),
    "ts4": ("TIMESTAMP(4) NULL", st.datetimes(dt.datetime(1970, 1, 2), dt.datetime(2038, 1, 18))),
    "y": ("YEAR", st.integers(1901, 2155) | st.just(0)),
    "e": ("ENUM('a','b c','')", st.sampled_from(["a", "b c", ""])),
    "s": ("SET('x','y','z')", st.sets(st.sampled_from("xyz")).map(",".join)),
    "j": ("JSON", st.sampled_from(['{"k": [1, "v"]}', "[]", "null"])),
}
ROWS = st.lists(st.fixed_dictionaries({name: st.none() | values
                                       for name, (_, values) in COLUMNS.items()}),
                min_size=1, max_size=12)
EVENTS = [TableMapEvent, WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent]
_ids = itertools.count(1)


# MySQL's JSON is its binary format, which the library decodes (not the compiled decoder).
MYSQL_COLUMNS = [name for name in COLUMNS if name != "j"]


def _create(pair: SourcePair, names: list[str]) -> str:
    """A database with a table of every supported type and one with a TIME column."""
    db = f"rowimages_{os.getpid()}"
    ddl = ", ".join(f"{name} {COLUMNS[name][0]}" for name in names)
    pair.primary.execute(f"CREATE DATABASE {db}")
    pair.primary.execute(f"CREATE TABLE {db}.every (id INT PRIMARY KEY, {ddl})")
    pair.primary.execute(f"CREATE TABLE {db}.odd (id INT PRIMARY KEY, t TIME(1))")
    return db


@pytest.fixture(scope="module")
def rowimages_db(mariadb: MariaDbPair) -> str:
    return _create(mariadb, list(COLUMNS))


@pytest.fixture(scope="module")
def mysql_rowimages_db(mysql: MySqlPair) -> str:
    return _create(mysql, MYSQL_COLUMNS)


def _typed(value: Any) -> Any:
    """Type and exact text of a value (sets in order): 1 == 1.0 == True must not pass."""
    if isinstance(value, set):
        return ("set", sorted(value))
    return (type(value).__name__, repr(value))


def _library_rows(event: Any) -> list[Any]:
    if isinstance(event, UpdateRowsEvent):
        return [(_image(r, "before_"), _image(r, "after_")) for r in event.rows]
    return [_image(r) for r in event.rows]


def _replica_position(pair: SourcePair) -> str:
    conn = pair.replica.root()
    try:
        with conn.cursor() as cur:
            return str(flavour_named(pair.flavour).current_position(cur))
    finally:
        conn.close()


def _both(pair: SourcePair, start: str, db: str) -> list[tuple[Any, Any]]:
    """(compiled, library) decodings of every rows event of `db` since `start`."""
    conn = pair.cdc_settings()
    conn["passwd"] = conn.pop("password")
    stream = BinLogStreamReader(conn, server_id=9321,
                                is_mariadb=flavour_named(pair.flavour).is_mariadb,
                                auto_position=start,
                                blocking=False, only_events=EVENTS, enable_logging=False)
    decoded = []
    try:
        for event in stream:
            if isinstance(event, TableMapEvent) or event.schema != db:
                continue
            fast = fast_rows(event)  # before the library: it reads the packet after us
            decoded.append((fast, _library_rows(event)))
    finally:
        stream.close()
    return decoded


def _shape(rows: list[Any]) -> list[Any]:
    def image(values: dict[str, Any]) -> list[Any]:
        return [(name, _typed(value)) for name, value in values.items()]
    return [tuple(image(r) for r in row) if isinstance(row, tuple) else image(row)
            for row in rows]


def _check_random_rows(pair: SourcePair, db: str, names: list[str],
                       inserted: list[dict[str, Any]], updated: list[dict[str, Any]]) -> None:
    start = _replica_position(pair)
    conn = pair.primary.root(database=db)
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION sql_mode = '', time_zone = '+00:00'")
            ids = [next(_ids) for _ in inserted]
            cur.executemany(f"INSERT INTO every (id, {', '.join(names)}) VALUES "
                            f"(%s, {', '.join(['%s'] * len(names))})",
                            [[i] + [row[n] for n in names] for i, row in zip(ids, inserted)])
            for i, row in zip(ids, updated):
                cur.execute(f"UPDATE every SET {', '.join(f'{n} = %s' for n in names)} "
                            "WHERE id = %s", [row[n] for n in names] + [i])
            cur.execute(f"DELETE FROM every WHERE id IN ({', '.join(map(str, ids))})")
            cur.execute("INSERT INTO odd (id, t) VALUES (%s, '-01:02:03.5')", (ids[0],))
    finally:
        conn.close()
    pair.wait_synced()
    decoded = _both(pair, start, db)
    assert len(decoded) >= 3
    *every, (odd_fast, odd_library) = decoded
    assert odd_fast is None and len(odd_library) == 1  # TIME: the library's way
    for fast, library in every:
        assert fast is not None
        for ours, theirs in zip(_shape(fast), _shape(library), strict=True):
            for a, b in zip(ours if isinstance(ours, tuple) else (ours,),
                            theirs if isinstance(theirs, tuple) else (theirs,), strict=True):
                assert [x for x in a if x not in b] == [y for y in b if y not in a]


RANDOM_ROWS = settings(max_examples=40, deadline=None,
                       suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@RANDOM_ROWS
@given(inserted=ROWS, updated=ROWS)
def test_compiled_decoders_equal_the_library_on_random_rows(
        mariadb: MariaDbPair, rowimages_db: str, inserted: list[dict[str, Any]],
        updated: list[dict[str, Any]]) -> None:
    _check_random_rows(mariadb, rowimages_db, list(COLUMNS), inserted, updated)


@RANDOM_ROWS
@given(inserted=ROWS, updated=ROWS)
def test_compiled_decoders_take_mysqls_full_images_too(
        mysql: MySqlPair, mysql_rowimages_db: str, inserted: list[dict[str, Any]],
        updated: list[dict[str, Any]]) -> None:
    """MySQL sets the unused bits of the columns-present bitmap (MariaDB clears them): its
    FULL images must reach the compiled decoders, not only the library."""
    _check_random_rows(mysql, mysql_rowimages_db, MYSQL_COLUMNS, inserted, updated)


def test_minimal_images_go_the_librarys_way(mariadb: MariaDbPair, rowimages_db: str) -> None:
    db = rowimages_db
    start = mariadb.primary.gtid_binlog_pos()
    conn: pymysql.connections.Connection = mariadb.primary.root(database=db)
    try:
        with conn.cursor() as cur:
            i = next(_ids)
            cur.execute("SET SESSION binlog_row_image = 'MINIMAL'")
            cur.execute("INSERT INTO every (id, ti) VALUES (%s, 1)", (i,))
            cur.execute("UPDATE every SET ti = 2 WHERE id = %s", (i,))
    finally:
        conn.close()
    mariadb.wait_synced()
    # The replica logs what it applies with its own (FULL) image; read the primary's binlog.
    settings_ = {"host": "127.0.0.1", "port": mariadb.primary.port, "user": "root",
                 "passwd": ""}
    stream = BinLogStreamReader(settings_, server_id=9322, is_mariadb=True,
                                auto_position=start, blocking=False, only_events=EVENTS)
    seen = 0
    try:
        for event in stream:
            if not isinstance(event, TableMapEvent) and event.schema == db:
                assert fast_rows(event) is None
                seen += 1
    finally:
        stream.close()
    assert seen == 2
