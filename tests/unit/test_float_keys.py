"""FLOAT and DOUBLE chunk keys compare exactly with the binlog's, and stored bounds of an
earlier version (a FLOAT as 6 printed digits) never skip a row on resume.

The server is replaced by a cursor answering as MariaDB and mysqlclient do: a FLOAT column
comes back as its 6-digit text made a float, `col + 0e0` as every digit of the DOUBLE
(tests/integration/test_float_keys.py runs the real servers).
"""

from __future__ import annotations

import json
import struct
from typing import Any, Self

from hypothesis import given
from hypothesis import strategies as st

from connector.flavours import MARIADB
from connector.gtid import MariaDbGtidPos, MariaGtid
from connector.schema import Column, TableSchema
from connector.snapshot.keys import binlog_key_reader, exact_key_columns
from connector.snapshot.progress import TableProgress, key_from_json, key_to_json
from connector.snapshot.source import ChunkRequest, SelectedChunk, select_chunk
from connector.snapshot.window import ChunkWindow

SCHEMA = TableSchema("d", "t", (Column("k", "float", nullable=False),
                                Column("n", "int", nullable=False)), ("k",))
COMPOSITE = TableSchema("d", "c", (Column("a", "int", nullable=False),
                                   Column("k", "float", nullable=False),
                                   Column("n", "int", nullable=False)), ("a", "k"))

float32s = st.floats(width=32, allow_nan=False, allow_infinity=False)


def as_binlog(value: float) -> float:
    """The value mysql-replication reads from a rows event: the float32, widened exactly."""
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


class ServerCursor:
    """The chunk SELECT's answer: the table's columns as text made values, then the exact
    key expressions; `@@` variables as one GTID position."""

    def __init__(self, table: list[tuple[Any, ...]], exact_at: list[int]) -> None:
        self.table = table
        self.exact_at = exact_at  # where in a table row each exact key column is
        self.description: list[tuple[str]] = []
        self.sql = ""
        self._result: list[tuple[Any, ...]] = []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def execute(self, sql: str, params: Any = None) -> None:
        if "@@" in sql:  # the low watermark's read also asks for the server id
            self._result = [("0-1-5", 2) if "server_id" in sql else ("0-1-5",)]
            return
        self.sql = sql
        names = [c.name for c in (COMPOSITE if len(self.table[0]) == 3 else SCHEMA).columns]
        self.description = [(n,) for n in names] + [("exact",) for _ in self.exact_at]
        self._result = [tuple(float(f"{v:.6g}") if isinstance(v, float) else v for v in row)
                        + tuple(float(repr(row[i])) for i in self.exact_at)
                        for row in self.table]

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._result

    def fetchone(self) -> tuple[Any, ...]:
        return self._result[0]


class Server:
    def __init__(self, cursor: ServerCursor) -> None:
        self._cursor = cursor

    def cursor(self) -> ServerCursor:
        return self._cursor

    def close(self) -> None:
        pass


def read_chunk(schema: TableSchema, rows: list[tuple[Any, ...]]) -> tuple[SelectedChunk, str]:
    exact = exact_key_columns(schema, schema.primary_key)
    names = [c.name for c in schema.columns]
    cursor = ServerCursor(rows, [names.index(c) for c in exact])
    request = ChunkRequest(number=1, table=f"{schema.db}.{schema.table}",
                           columns=tuple(names), key_columns=schema.primary_key,
                           condition=None, after=None, limit=len(rows) + 1, encoding=None,
                           streamed=MariaDbGtidPos.parse("0-1-5"), exact_keys=exact)
    chunk = select_chunk(Server(cursor), request, MARIADB)
    assert isinstance(chunk, SelectedChunk)
    return chunk, cursor.sql


@given(st.lists(float32s, min_size=1, max_size=30, unique_by=as_binlog))
def test_every_binlog_float_key_finds_its_chunk_row(values: list[float]) -> None:
    keys = sorted({as_binlog(v) for v in values})
    chunk, sql = read_chunk(SCHEMA, [(k, n) for n, k in enumerate(keys)])
    assert "(`k` + 0e0)" in sql
    assert len(chunk.rows) == len(keys)  # 1.0000001 and 1 print alike: two rows, two keys
    assert all(row["k"] == key[0] for key, row in chunk.rows.items())  # the event's key
    window: ChunkWindow[Any] = ChunkWindow("d.t", dict(chunk.rows), chunk.low, chunk.high)
    key_of = binlog_key_reader(SCHEMA, ("k",))
    for n, k in enumerate(keys):
        window.on_row_change("d.t", MariaGtid(0, 1, 6), key_of({"k": as_binlog(k), "n": n}))
    assert window.pending == 0, "a change inside the window left a stale chunk row"
    stored = key_from_json(json.loads(json.dumps(key_to_json(chunk.last_key))))
    assert stored == (keys[-1],)


@given(st.lists(st.tuples(st.integers(0, 3), float32s), min_size=1, max_size=30,
                unique_by=lambda ak: (ak[0], as_binlog(ak[1]))))
def test_a_composite_key_with_a_float_part_matches_too(pairs: list[tuple[int, float]]) -> None:
    keys = sorted({(a, as_binlog(k)) for a, k in pairs})
    chunk, sql = read_chunk(COMPOSITE, [(a, k, n) for n, (a, k) in enumerate(keys)])
    assert "SELECT `a`, `k`, `n`, (`k` + 0e0) FROM" in sql
    assert set(chunk.rows) == set(keys) and chunk.last_key == keys[-1]


def test_double_keys_are_read_in_full_and_decimal_keys_as_they_are() -> None:
    schema = TableSchema("d", "t", (Column("x", "double", nullable=False),
                                    Column("y", "decimal", nullable=False),
                                    Column("z", "float", nullable=False)), ("x", "y", "z"))
    assert exact_key_columns(schema, ("x", "y", "z")) == ("x", "z")


@given(float32s)
def test_a_rounded_float_stored_by_an_earlier_version_resumes_at_or_before_its_row(
        value: float) -> None:
    """Earlier versions stored a FLOAT key as the server printed it (6 digits): resuming
    after it as a last key may repeat rows but never skips its own; as a max key it never
    ends the table early."""
    exact = as_binlog(value)
    legacy = [{"float": repr(float(f"{exact:.6g}"))}]
    stored = {"table": "d.t", "last_key": legacy, "max_key": legacy}
    progress = TableProgress.from_json(stored)
    assert progress.last_key is not None and progress.max_key is not None
    assert progress.last_key[0] <= exact <= progress.max_key[0]
    exact_written = TableProgress.from_json(json.loads(json.dumps(
        TableProgress(table="d.t", last_key=(exact,), max_key=(exact,)).to_json())))
    assert exact_written.last_key == exact_written.max_key == (exact,)

