"""The demo's databases: a private primary + read-only replica of either flavour, the sample
tables, the connector.json a user would write for them, and a writer that keeps changing rows.

The servers are the test harness's (`tests/services.py` for MariaDB, `tests/mysql_services.py`
for MySQL 9 from the root `make setup` builds): one way to run them, so the demo runs from a
source checkout, not from a wheel. They are imported by name so that type-checking the
product packages does not pull in tests/.
"""

from __future__ import annotations

import datetime as dt
import importlib
import random
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from connector.demo_report import DB, TABLES

FLAVOURS = ("mariadb", "mysql")
LABELS = {"mariadb": "MariaDB", "mysql": "MySQL"}
# What a Debezium user has in connector.class (gtidmark reads the flavour from the server).
CONNECTOR_CLASSES = {"mariadb": "io.debezium.connector.mariadb.MariaDbConnector",
                     "mysql": "io.debezium.connector.mysql.MySqlConnector"}
CUSTOMERS, ORDERS = 3_000, 12_000

# Plain SQL both flavours run alike; the rows come from `insert_sequence` (MariaDB's
# SEQUENCE engine, a recursive CTE on MySQL), which numbers them `seq` = 1..N.
SCHEMA = [
    f"CREATE DATABASE {DB}",
    (f"CREATE TABLE {DB}.customers (id INT PRIMARY KEY, name VARCHAR(60) NOT NULL, "
     "email VARCHAR(80), balance DECIMAL(12,2), signed_up DATETIME) DEFAULT CHARSET=utf8mb4"),
    (f"CREATE TABLE {DB}.orders (id INT PRIMARY KEY, customer_id INT NOT NULL, "
     "amount DECIMAL(10,2), status VARCHAR(12), placed_at DATETIME(6))"),
]
# Each table's row count and the SELECT list that makes row `seq`.
CUSTOMER_ROW = ("seq, CONCAT('customer ', seq), CONCAT('c', seq, '@example.com'), "
                "MOD(seq * 7919, 1000000) / 100, "
                "TIMESTAMP '2023-01-01 00:00:00' + INTERVAL seq * 1777 SECOND")
ORDER_ROW = (f"seq, 1 + MOD(seq * 31, {CUSTOMERS}), MOD(seq * 104729, 50000) / 100, "
             "ELT(1 + MOD(seq, 4), 'new', 'paid', 'shipped', 'returned'), "
             "TIMESTAMP '2024-01-01 00:00:00' + INTERVAL seq * 613 SECOND "
             "+ INTERVAL MOD(seq * 7, 1000000) MICROSECOND")
ROWS: dict[str, tuple[int, str]] = {"customers": (CUSTOMERS, CUSTOMER_ROW),
                                    "orders": (ORDERS, ORDER_ROW)}


def _tests_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise SystemExit("the demo runs from a gtidmark source checkout: `make demo` in the "
                         f"repository root (cannot import {name}: {exc})") from None


def new_pair(flavour: str, base: Path) -> Any:
    """The primary + read-only replica of `flavour` under `base`, not started yet."""
    if flavour == "mysql":
        return _tests_module("tests.mysql_services").MySqlPair.create(base)
    return _tests_module("tests.services").MariaDbPair.create(base)


def new_broker(base: Path) -> Any:
    """A local Apache Kafka broker (one KRaft node), not started yet."""
    return _tests_module("tests.kafka_services").Broker(base)


def create_sample_tables(pair: Any) -> None:
    """`shop.customers` and `shop.orders` with their rows, on the primary; the replica too."""
    insert_sequence = _tests_module("tests.workload").insert_sequence
    for sql in SCHEMA:
        pair.primary.execute(sql)
    for table, (rows, select) in ROWS.items():
        insert_sequence(pair, DB, table, rows, select)
    pair.wait_synced()


def connector_document(flavour: str, prefix: str, cdc: dict[str, Any],
                       bootstrap: str) -> dict[str, Any]:
    """The connector.json a user would write for the sample database."""
    return {"name": f"{prefix}-connector", "config": {
        "connector.class": CONNECTOR_CLASSES[flavour],
        "database.hostname": cdc["host"], "database.port": str(cdc["port"]),
        "database.user": cdc["user"], "database.password": cdc["password"],
        "database.server.id": "5401", "topic.prefix": prefix,
        "database.include.list": DB, "bootstrap.servers": bootstrap,
        "snapshot.mode": "no_data",
        # Small, slightly throttled chunks: the snapshot takes a few seconds, so the writer's
        # changes really interleave with it (the DBLog window at work).
        "incremental.snapshot.chunk.size": "500", "incremental.snapshot.chunk.delay.ms": "100",
    }}


class Writer(threading.Thread):
    """Inserts, updates and deletes rows of both sample tables on the primary until stopped."""

    def __init__(self, primary: Any, seed: int = 7, per_second: float = 150.0) -> None:
        super().__init__(name="demo-writer", daemon=True)
        self.conn = primary.root(DB)
        self.rng = random.Random(seed)
        self.interval = 1.0 / per_second
        self.stop_flag = threading.Event()
        self.writes = 0
        self.error: BaseException | None = None
        self.next_id = {"customers": CUSTOMERS + 1, "orders": ORDERS + 1}

    def run(self) -> None:
        try:
            next_at = time.monotonic()
            with self.conn.cursor() as cur:
                while not self.stop_flag.wait(max(0.0, next_at - time.monotonic())):
                    next_at += self.interval
                    self._one(cur)
                    self.writes += 1
        except BaseException as exc:  # noqa: BLE001 - surfaced by stop()
            self.error = exc

    def _one(self, cur: Any) -> None:
        r = self.rng
        table = r.choice(TABLES)
        key = r.randint(1, self.next_id[table] - 1)
        kind = r.random()
        if kind < 0.55 and table == "customers":
            cur.execute("UPDATE customers SET balance = balance + %s, name = %s WHERE id = %s",
                        (r.randint(-5000, 5000) / 100, f"customer {key} (edited)", key))
        elif kind < 0.55:
            cur.execute("UPDATE orders SET status = %s, amount = amount + 1 WHERE id = %s",
                        (r.choice(["paid", "shipped", "returned", "void"]), key))
        elif kind < 0.75:
            cur.execute(f"DELETE FROM {table} WHERE id = %s", (key,))
        else:
            new = self.next_id[table]
            self.next_id[table] += 1
            stamp = dt.datetime.now().replace(microsecond=r.randint(0, 999_999))
            if table == "customers":
                cur.execute("INSERT INTO customers VALUES (%s, %s, %s, %s, %s)",
                            (new, f"new customer {new}", None, 0, stamp.replace(microsecond=0)))
            else:
                cur.execute("INSERT INTO orders VALUES (%s, %s, %s, %s, %s)",
                            (new, r.randint(1, CUSTOMERS), r.randint(100, 99_999) / 100,
                             "new", stamp))

    def stop(self) -> int:
        """Stop writing; the number of writes, or the writer's error raised here."""
        if not self.stop_flag.is_set():
            self.stop_flag.set()
            self.join(30)
            self.conn.close()
        if self.error is not None:
            raise RuntimeError(f"the writer failed: {self.error}") from self.error
        return self.writes
