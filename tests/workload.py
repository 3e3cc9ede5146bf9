"""A random write workload on the primary: the source of truth the rebuild tests compare with."""

from __future__ import annotations

import datetime
import decimal
import random
from typing import Any

from tests.mysql_services import MySqlPair
from tests.services import MariaDbPair

TABLES = {
    "orders": (("CREATE TABLE {db}.orders (id INT PRIMARY KEY, customer VARCHAR(40) NOT NULL, "
               "amount DECIMAL(12,2), status VARCHAR(10), created DATETIME(6), "
               "flags BIGINT UNSIGNED)"), ["id"]),
    "customers": (("CREATE TABLE {db}.customers (code VARCHAR(20) PRIMARY KEY, "
                   "name VARCHAR(60), balance BIGINT) DEFAULT CHARSET=utf8mb4"), ["code"]),
    "items": (("CREATE TABLE {db}.items (order_id INT, line INT, sku VARCHAR(20), qty INT, "
               "PRIMARY KEY (order_id, line))"), ["order_id", "line"]),
}


class Workload:
    def __init__(self, mariadb: MariaDbPair | MySqlPair, db: str, seed: int) -> None:
        self.mariadb = mariadb
        self.db = db
        self.rng = random.Random(seed)
        self.changes = 0
        self.next_order = 1
        self.orders: set[int] = set()
        self.customers: set[str] = set()
        self.items: set[tuple[int, int]] = set()
        self.added_column = False
        self.conn = mariadb.primary.root(autocommit=False)

    def create(self) -> None:
        with self.conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {self.db}")
            for ddl, _ in TABLES.values():
                cur.execute(ddl.format(db=self.db))
        self.conn.commit()

    def _order_row(self, oid: int) -> tuple[Any, ...]:
        r = self.rng
        return (oid, f"cust-{r.randint(1, 500)}",
                decimal.Decimal(r.randint(-10**9, 10**9)).scaleb(-2),
                r.choice(["new", "paid", "sent", None]),
                datetime.datetime(2024, 1, 1) + datetime.timedelta(
                    microseconds=r.randint(0, 10**13)),
                r.choice([0, 1, 2**64 - 1, r.randint(0, 2**63)]))

    def insert_orders(self, cur: Any, n: int) -> None:
        rows = []
        for _ in range(n):
            oid = self.next_order
            self.next_order += 1
            self.orders.add(oid)
            rows.append(self._order_row(oid))
        cur.executemany(f"INSERT INTO {self.db}.orders (id, customer, amount, status, created, "
                        "flags) VALUES (%s,%s,%s,%s,%s,%s)", rows)
        self.changes += n

    def step(self) -> None:
        """One transaction of 1..N row changes, chosen at random."""
        r = self.rng
        db = self.db
        with self.conn.cursor() as cur:
            kind = r.random()
            if kind < 0.25 or len(self.orders) < 20:
                self.insert_orders(cur, r.choice([1, 2, 3, 50, 200]))
            elif kind < 0.45:
                ids = r.sample(sorted(self.orders), min(len(self.orders), r.randint(1, 5)))
                for oid in ids:
                    cur.execute(f"UPDATE {db}.orders SET status=%s, amount=amount+1 "
                                "WHERE id=%s", (r.choice(["paid", "sent", "void"]), oid))
                self.changes += len(ids)
            elif kind < 0.55:
                oid = r.choice(sorted(self.orders))
                cur.execute(f"DELETE FROM {db}.orders WHERE id=%s", (oid,))
                self.orders.discard(oid)
                self.changes += 1
            elif kind < 0.60:
                old = r.choice(sorted(self.orders))
                new = self.next_order
                self.next_order += 1
                cur.execute(f"UPDATE {db}.orders SET id=%s WHERE id=%s", (new, old))
                self.orders.discard(old)
                self.orders.add(new)
                self.changes += 1
            elif kind < 0.75:
                code = f"C{r.randint(1, 3000):05d}-é"
                cur.execute(f"INSERT INTO {db}.customers VALUES (%s,%s,%s) ON DUPLICATE KEY "
                            "UPDATE balance=balance+VALUES(balance)",
                            (code, f"name {r.random():.6f}", r.randint(-1000, 1000)))
                self.customers.add(code)
                self.changes += 1
            elif kind < 0.80 and self.customers:
                code = r.choice(sorted(self.customers))
                cur.execute(f"DELETE FROM {db}.customers WHERE code=%s", (code,))
                self.customers.discard(code)
                self.changes += 1
            elif kind < 0.95:
                oid = r.randint(1, max(self.next_order, 2))
                lines = [(oid, line) for line in range(r.randint(1, 4))]
                cur.executemany(f"REPLACE INTO {db}.items VALUES (%s,%s,%s,%s)",
                                [(o, line, f"sku{r.randint(1, 99)}", r.randint(1, 9))
                                 for o, line in lines])
                self.items.update(lines)
                self.changes += len(lines)
            elif self.items:
                key = r.choice(sorted(self.items))
                cur.execute(f"UPDATE {db}.items SET qty=qty+1 WHERE order_id=%s AND line=%s",
                            key)
                cur.execute(f"DELETE FROM {db}.items WHERE order_id=%s AND line<%s",
                            (key[0], r.randint(0, 3)))
                self.changes += 2
        self.conn.commit()

    def add_column(self) -> None:
        with self.conn.cursor() as cur:
            # No DEFAULT: the binlog carries no event for rows the DDL fills in, so a column
            # added with a non-null default differs for untouched rows (as with Debezium)
            # until the table is snapshotted again.
            cur.execute(f"ALTER TABLE {self.db}.orders ADD COLUMN note VARCHAR(30)")
            cur.execute(f"UPDATE {self.db}.orders SET note='touched' WHERE MOD(id, 7) = 0")
        self.conn.commit()
        self.added_column = True

    def run(self, changes: int, add_column_at: float | None = 0.5) -> None:
        target = self.changes + changes
        ddl_at = None if add_column_at is None else self.changes + int(changes * add_column_at)
        while self.changes < target:
            self.step()
            if ddl_at is not None and not self.added_column and self.changes >= ddl_at:
                self.add_column()

    def close(self) -> None:
        self.conn.close()


def synced_workload(mariadb: MariaDbPair | MySqlPair, db: str, seed: int) -> Workload:
    """A workload whose tables the replica has too, so a connector started next captures them."""
    workload = Workload(mariadb, db, seed)
    workload.create()
    mariadb.wait_synced()
    return workload


def insert_sequence(pair: MariaDbPair | MySqlPair, db: str, table: str, rows: int,
                    select: str, first: int = 1) -> None:
    """INSERT INTO db.table SELECT `select` over `seq` = first..first+rows-1, one statement
    on either flavour's primary (MariaDB's SEQUENCE engine; a recursive CTE on MySQL)."""
    last = first + rows - 1
    if pair.flavour == "mariadb":
        pair.primary.execute(f"INSERT INTO {db}.{table} SELECT {select} "
                             f"FROM {db}.seq_{first}_to_{last}")
        return
    conn = pair.primary.root()
    try:
        with conn.cursor() as cur:
            cur.execute(f"SET SESSION cte_max_recursion_depth = {rows + 1}")
            cur.execute(f"INSERT INTO {db}.{table} WITH RECURSIVE numbers (seq) AS "
                        f"(SELECT CAST({first} AS SIGNED) UNION ALL SELECT seq + 1 "
                        f"FROM numbers WHERE seq < {last}) SELECT {select} FROM numbers")
    finally:
        conn.close()
