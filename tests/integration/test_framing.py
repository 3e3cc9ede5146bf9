"""The reader's own event framing (connector/binlog/framing.py) against the library's.

A mixed workload on a private MariaDB, read over TLS (DDL, XA prepared then committed or
rolled back and XA COMMIT ONE PHASE, updates, deletes, a 3 MB value, types the compiled
decoders leave to the library, a statement-logged insert, binlog rotations, transactions
handed over in pieces) is read by BinlogReader twice: with frames() and with
library_frames(), the library's own events and row decoding. Every Transaction must be the
same, values compared with their types.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from connector.binlog import reader as reader_module
from connector.binlog.framing import ROWS, Framing, frames, library_frames
from connector.binlog.queue import ChangeQueue
from connector.binlog.reader import BinlogReader
from connector.binlog.transactions import Transaction
from connector.flavours import MARIADB, MYSQL, Flavour
from connector.settings.tls import mysql_ssl
from tests.integration.solo import SoloMariaDb, solo
from tests.mysql_services import MySqlPair
from tests.services import CDC_PASSWORD, CDC_USER

__all__ = ["solo"]  # the module-scoped fixture

FAST = ("CREATE TABLE {db}.fast (id INT PRIMARY KEY, n DECIMAL(12,2), v VARCHAR(40), "
        "d DATETIME(3), e ENUM('a','b'), s SET('x','y'), big LONGTEXT, b BLOB, f DOUBLE, "
        "u BIGINT UNSIGNED, ts TIMESTAMP(2) NULL, y YEAR, dd DATE)")
SLOW = "CREATE TABLE {db}.slow (id INT PRIMARY KEY, t TIME(1), j JSON, bits BIT(5))"
ROW = ("({i}, {i}.25, 'v{i}', '2024-01-02 03:04:05.678', 'b', 'x,y', 'text', x'00ff', 1.5, "
       "18446744073709551615, '2024-01-02 03:04:05.12', 2024, '2024-02-29')")


def _workload(solo: SoloMariaDb, db: str) -> None:
    conn = solo.root(database=db, autocommit=True)
    with conn.cursor() as cur:
        def run(*statements: str) -> None:
            for statement in statements:
                cur.execute(statement)

        run(FAST.format(db=db), SLOW.format(db=db))
        run(*(f"INSERT INTO fast VALUES {ROW.format(i=i)}" for i in range(1, 6)),
            "INSERT INTO fast (id) VALUES (6), (7)",  # NULLs
            "INSERT INTO fast (id, s, e, v) VALUES (8, '', 'a', '')",  # empty SET and string
            "UPDATE fast SET v = 'upd', n = -n WHERE id <= 3",
            "DELETE FROM fast WHERE id = 2",
            "INSERT INTO slow VALUES (1, '-01:02:03.5', '{\"k\": [1, \"v\"]}', b'10101'),"
            " (2, '838:59:59.0', '[]', NULL)",
            "UPDATE slow SET t = '00:00:01.2', j = '{}' WHERE id = 1",
            "FLUSH BINARY LOGS",
            "BEGIN", f"INSERT INTO fast VALUES {ROW.format(i=9)}",
            "INSERT INTO slow (id) VALUES (3)", "UPDATE fast SET big = REPEAT('x', 3000000) "
            "WHERE id = 9", "DELETE FROM slow WHERE id = 2", "COMMIT",
            "ALTER TABLE fast ADD COLUMN w INT UNSIGNED, MODIFY v VARCHAR(60)",
            "INSERT INTO fast (id, w, v) VALUES (10, 4000000000, 'after the alter')",
            "XA START 'x1'", "INSERT INTO fast (id) VALUES (11)", "XA END 'x1'",
            "XA PREPARE 'x1'")
        solo.execute(f"INSERT INTO {db}.slow (id) VALUES (4)")  # while x1 is open
        run("XA COMMIT 'x1'",
            "XA START 'x2'", "INSERT INTO fast (id) VALUES (12)", "XA END 'x2'",
            "XA PREPARE 'x2'", "XA ROLLBACK 'x2'",
            "XA START 'x3'", "INSERT INTO fast (id) VALUES (13)", "XA END 'x3'",
            "XA COMMIT 'x3' ONE PHASE",
            "INSERT INTO fast (id, v) SELECT seq, CONCAT('s', seq) FROM seq_100_to_219",
            "UPDATE fast SET n = 1 WHERE id BETWEEN 100 AND 219",
            "SET SESSION binlog_format = 'STATEMENT'",
            "INSERT INTO fast (id, v) VALUES (14, 'statement-logged')",
            "SET SESSION binlog_format = 'ROW'",
            "FLUSH BINARY LOGS",
            "CREATE TABLE other (k INT PRIMARY KEY)", "RENAME TABLE other TO other2",
            "DROP TABLE other2", "DELETE FROM fast WHERE id >= 100")
    conn.close()


def _settings(solo: SoloMariaDb) -> dict[str, Any]:
    assert solo.certs is not None
    return {"host": "127.0.0.1", "port": solo.port, "user": CDC_USER, "passwd": CDC_PASSWORD,
            "ssl": mysql_ssl("verify_ca", str(solo.certs["ca"]))}


def _read(settings: dict[str, Any], flavour: Flavour, start: str, end: str, framing: Framing,
          server_id: int) -> list[Transaction]:
    """Every transaction BinlogReader hands over from `start` through `end`."""
    out: ChangeQueue[Transaction] = ChangeQueue()
    reader = BinlogReader(settings, server_id, flavour, flavour.position(start), out,
                          framing=framing)
    position, target = flavour.position(start), flavour.position(end)
    seen: list[Transaction] = []
    deadline = time.monotonic() + 60
    reader.start()
    try:
        while not position.covers(target):
            assert time.monotonic() < deadline, f"read up to {position}, not {end}"
            for tx in out.take(0.5):
                seen.append(tx)
                if not tx.partial:
                    position = position.advance(tx.gtid)
            assert out.failure is None, out.failure
    finally:
        reader.stop()
        reader.join(10)
    return seen


def _typed(value: Any) -> Any:
    """Type and exact text of a value (sets in order): 1 == 1.0 == True must not pass."""
    if isinstance(value, set):
        return ("set", sorted(value))
    return (type(value).__name__, repr(value))


def _shape(tx: Transaction) -> tuple[Any, ...]:
    def image(values: dict[str, Any]) -> list[Any]:
        return [(name, _typed(value)) for name, value in values.items()]

    changes = [(c.table, c.op, c.pos, [tuple(image(i) for i in row) if c.op == "u"
                                       else image(row) for row in c.rows])
               for c in tx.changes]
    return (tx.gtid, tx.file, tx.begin_pos, tx.end_pos, tx.server_id, tx.thread,
            tx.db, tx.ddl, tx.gaps, tx.hold, tx.piece, tx.partial, changes)


def test_own_framing_hands_over_the_transactions_of_the_library(
        solo: SoloMariaDb, unique_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader_module, "PIECE_ROWS", 50)
    db = unique_name
    start = solo.gtid_binlog_pos()
    solo.execute(f"CREATE DATABASE {db}")
    _workload(solo, db)
    end = solo.gtid_binlog_pos()
    rows: Counter[str] = Counter()

    def counted(stream: Any, schema_of: Any) -> Iterator[tuple[Any, ...]]:
        for frame in frames(stream, schema_of):
            if frame[0] == ROWS:
                rows["compiled" if frame[3] is not None else "library"] += 1
            yield frame

    ours = _read(_settings(solo), MARIADB, start, end, counted, 9401)
    reference = _read(_settings(solo), MARIADB, start, end, library_frames, 9402)
    assert [_shape(tx) for tx in ours] == [_shape(tx) for tx in reference]
    assert [tx.ts_us for tx in ours] == [tx.ts_us for tx in reference]
    # The workload covered what it is meant to: both decoders, every kind of group.
    assert rows["compiled"] >= 15 and rows["library"] >= 4
    assert len({tx.file for tx in ours}) == 3
    assert any(tx.partial for tx in ours) and any(tx.piece > 0 for tx in ours)
    assert any(tx.ddl and "ALTER TABLE" in tx.ddl for tx in ours)
    assert [(gap.tables, gap.setting) for tx in ours for gap in tx.gaps] == [
        (((db, "fast"),), "binlog_format=ROW")]
    committed = [c.rows for tx in ours for c in tx.changes if c.table.table == "fast"
                 and c.op == "c" and len(c.rows) == 1 and c.rows[0]["id"] in (11, 12, 13)]
    assert sorted(r[0]["id"] for r in committed) == [11, 13]
    assert any(tx.hold for tx in ours)


def _mysql_workload(pair: MySqlPair, db: str) -> None:
    conn = pair.primary.root(database=db, autocommit=True)
    with conn.cursor() as cur:
        for statement in (
                FAST.format(db=db), SLOW.format(db=db),
                *(f"INSERT INTO fast VALUES {ROW.format(i=i)}" for i in range(1, 6)),
                "INSERT INTO fast (id) VALUES (6), (7)",
                "UPDATE fast SET v = 'upd', n = -n WHERE id <= 3",
                "DELETE FROM fast WHERE id = 2",
                ("INSERT INTO slow VALUES (1, '-01:02:03.5', '{\"k\": [1, \"v\"]}', b'10101'),"
                " (2, '838:59:59.0', '[]', NULL)"),
                "UPDATE slow SET t = '00:00:01.2', j = '{}' WHERE id = 1",
                "BEGIN", f"INSERT INTO fast VALUES {ROW.format(i=9)}",
                "INSERT INTO slow (id) VALUES (3)", "DELETE FROM slow WHERE id = 2", "COMMIT",
                "ALTER TABLE fast ADD COLUMN w INT UNSIGNED, MODIFY v VARCHAR(60)",
                "INSERT INTO fast (id, w, v) VALUES (10, 4000000000, 'after the alter')",
                "XA START 'x1'", "INSERT INTO fast (id) VALUES (11)", "XA END 'x1'",
                "XA PREPARE 'x1'", "XA COMMIT 'x1'",
                "XA START 'x2'", "INSERT INTO fast (id) VALUES (12)", "XA END 'x2'",
                "XA PREPARE 'x2'", "XA ROLLBACK 'x2'",
                "XA START 'x3'", "INSERT INTO fast (id) VALUES (13)", "XA END 'x3'",
                "XA COMMIT 'x3' ONE PHASE",
                "SET SESSION cte_max_recursion_depth = 1000",
                ("INSERT INTO fast (id, v) WITH RECURSIVE n (i) AS (SELECT 100 UNION ALL "
                "SELECT i + 1 FROM n WHERE i < 219) SELECT i, CONCAT('s', i) FROM n"),
                "CREATE TABLE other (k INT PRIMARY KEY)", "RENAME TABLE other TO other2",
                "DROP TABLE other2", "DELETE FROM fast WHERE id >= 100"):
            cur.execute(statement)
    conn.close()


def test_own_framing_hands_over_the_transactions_of_the_library_on_mysql(
        mysql: MySqlPair, unique_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """MySQL's untagged GTID events, DDL and XA groups (no BEGIN after the GTID), framed by
    us and by the library; the transactions must be the same."""
    monkeypatch.setattr(reader_module, "PIECE_ROWS", 50)
    db = unique_name
    start = mysql.replica.gtid_executed()
    mysql.primary.execute(f"CREATE DATABASE {db}")
    _mysql_workload(mysql, db)
    end = mysql.wait_synced()
    settings = mysql.cdc_settings()
    settings["passwd"] = settings.pop("password")
    ours = _read(settings, MYSQL, start, end, frames, 9403)
    reference = _read(settings, MYSQL, start, end, library_frames, 9404)
    assert [_shape(tx) for tx in ours] == [_shape(tx) for tx in reference]
    # Ours the commit time in microseconds, the library's the second its statement began.
    late = [(a.gtid, a.ts_us, b.ts_us) for a, b in zip(ours, reference, strict=True)
            if not 0 <= a.ts_us - b.ts_us < 5_000_000]
    assert not late
    assert sum(1 for tx in ours if tx.ts_us % 1_000_000) > len(ours) // 2
    assert any(tx.partial for tx in ours)
    assert sum(1 for tx in ours if tx.ddl and tx.ddl.startswith(("CREATE", "ALTER", "RENAME",
                                                                    "DROP"))) >= 6
    committed = sorted(row["id"] for tx in ours for c in tx.changes
                       if c.table.table == "fast" and c.op == "c" for row in c.rows
                       if row["id"] in (11, 12, 13))
    assert committed == [11, 13]

