"""Approximate and exact numeric primary keys under a snapshot with tiny chunks and
concurrent updates: the table rebuilt from the topic equals the primary.

A FLOAT prints with 6 digits: 1, 1.0000001, 1.0000002... all read back as 1.0, and none
equals the float the binlog carries, so chunk rows collapsed into one, a change inside a
window left the stale chunk row in place, and a chunk's last key could skip rows.
"""

from __future__ import annotations

import random
import struct
import threading
from pathlib import Path
from typing import Any

from tests.connector_tools import ConnectorProcess, SourcePair, rebuild
from tests.integration.test_snapshot import proc_doc, signal, start
from tests.integration.test_streaming import wait_caught_up
from tests.kafka_services import Broker


def float32_run(start: float, count: int, step: int = 1) -> list[float]:
    """`count` consecutive float32 values (every `step`-th) from `start`, as exact doubles."""
    bits = struct.unpack("<I", struct.pack("<f", start))[0]
    return [struct.unpack("<f", struct.pack("<I", bits + i * step))[0] for i in range(count)]


FLOATS = (float32_run(1.0, 40) + float32_run(0.1, 20) + float32_run(16777216.0, 20)
          + [-v for v in float32_run(0.3, 20)] + float32_run(3.0e38, 5, 1000))
DOUBLES = [0.1 + i * 2.0**-56 for i in range(40)] + [1e17 + 16 * i for i in range(20)] \
    + [-(2.0 / 3) - i * 2.0**-53 for i in range(20)]
TABLES: dict[str, tuple[str, list[tuple[Any, ...]]]] = {
    "f": ("k FLOAT NOT NULL PRIMARY KEY", [(k,) for k in FLOATS]),
    "fmd": ("k FLOAT(9,7) NOT NULL PRIMARY KEY", [(k,) for k in float32_run(1.0, 30, 10)]),
    "d": ("k DOUBLE NOT NULL PRIMARY KEY", [(k,) for k in DOUBLES]),
    "dc": ("k DECIMAL(30,12) NOT NULL PRIMARY KEY",
            [(f"{i // 10}.{i:012d}",) for i in range(60)]),
    "fc": ("a INT NOT NULL, k FLOAT NOT NULL, PRIMARY KEY (a, k)",
           [(a, k) for a in (1, 2) for k in float32_run(1.0, 30)]),
}


class Updater(threading.Thread):
    """Updates random rows of every table (by `n`, a unique integer) until stopped."""

    def __init__(self, pair: SourcePair, db: str) -> None:
        super().__init__(daemon=True)
        self.conn = pair.primary.root(db)
        self.stop_flag = threading.Event()
        self.updates = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        rng = random.Random(22)
        try:
            with self.conn.cursor() as cur:
                while not self.stop_flag.wait(0.002):
                    table, (_, rows) = rng.choice(list(TABLES.items()))
                    cur.execute(f"UPDATE {table} SET v = v + 1 WHERE n = %s",
                                (rng.randrange(len(rows)),))
                    self.updates += 1
        except BaseException as exc:  # noqa: BLE001 - raised by stop()
            self.error = exc

    def stop(self) -> int:
        self.stop_flag.set()
        self.join(30)
        self.conn.close()
        if self.error is not None:
            raise self.error
        return self.updates


def primary_rows(pair: SourcePair, db: str, table: str) -> set[tuple[int, int]]:
    conn = pair.primary.root(db)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT n, v FROM {table}")
            return {(int(n), int(v)) for n, v in cur.fetchall()}
    finally:
        conn.close()


def test_float_double_and_decimal_keys_snapshot_exactly_under_updates(
        source: SourcePair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    db = unique_name
    p = source.primary
    p.execute(f"CREATE DATABASE {db}")
    for table, (key, rows) in TABLES.items():
        p.execute(f"CREATE TABLE {db}.{table} ({key}, n INT NOT NULL UNIQUE, v INT NOT NULL)")
        marks = ", ".join(["%s"] * len(rows[0]))
        conn = p.root(db)
        try:
            with conn.cursor() as cur:
                cur.executemany(f"INSERT INTO {table} VALUES ({marks}, %s, 0)",
                                [(*row, n) for n, row in enumerate(rows)])
        finally:
            conn.close()
        assert len(primary_rows(source, db, table)) == len(rows), table
    source.wait_synced()
    proc = start(source, broker, db, tmp_path, connector,
                 incremental__snapshot__chunk__size="7")
    updater = Updater(source, db)
    updater.start()
    try:
        signal(proc, "execute-snapshot", tables=[f"{db}.{t}" for t in TABLES])
        for table in TABLES:
            proc.wait_log(f"snapshot of {db}.{table} complete", timeout=60)
    finally:
        updates = updater.stop()
    assert updates > 0
    wait_caught_up(source, broker, proc_doc(proc))
    wrong = {}
    for table, (_, rows) in TABLES.items():
        rebuilt, _ = rebuild(broker.bootstrap, f"{db}.{db}.{table}")
        got = {(r["n"], r["v"]) for r in rebuilt.values()}
        expected = primary_rows(source, db, table)
        if got != expected:
            wrong[table] = (f"{len(expected - got)} of {len(rows)} rows missing or stale, "
                            f"{len(got - expected)} extra or stale")
    assert not wrong, wrong
