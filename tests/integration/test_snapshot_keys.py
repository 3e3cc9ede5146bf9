"""Snapshot chunk keys against the real replica: BINARY padding, exact DECIMAL resume,
surrogate keys that are not unique, and tables that vanish while queued."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.connector_tools import ConnectorProcess, rebuild
from tests.integration.test_snapshot import proc_doc, signal, start
from tests.integration.test_streaming import wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.services import MariaDbPair, wait_for

pytestmark = pytest.mark.integration



def reads(broker: Broker, topic: str) -> list[dict[str, Any]]:
    """The `after` rows of the op=r events in `topic`."""
    out = []
    for msg in consume_all(broker.bootstrap, topic):
        if msg.value() is None:
            continue
        payload = json.loads(msg.value())["payload"]
        if payload["op"] == "r":
            out.append(payload["after"])
    return out


def test_binary_key_ending_in_zero_byte_is_dropped_from_the_window(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    """A change inside the chunk's window must drop that chunk row even when the binlog has
    stripped the key's trailing 0x00 bytes; otherwise the older snapshot row goes out after
    the change and wins downstream."""
    db = unique_name
    p = mariadb.primary
    p.execute(f"CREATE DATABASE {db}")
    p.execute(f"CREATE TABLE {db}.bin (id BINARY(8) PRIMARY KEY, v INT, pad CHAR(60))")
    p.execute(f"INSERT INTO {db}.bin SELECT UNHEX(CONCAT(LPAD(HEX(seq), 14, '0'), "
              f"IF(seq % 100 = 0, '00', '01'))), 0, REPEAT('x', 60) FROM {db}.seq_1_to_100000")
    mariadb.wait_synced()
    proc = start(mariadb, broker, db, tmp_path, connector,
                 incremental__snapshot__chunk__size="100000")
    updated: list[int] = []

    def update_zero_ending_keys() -> None:
        conn = p.root(db)
        try:
            with conn.cursor() as cur:
                for seq in range(500, 100_001, 500):  # 200 keys, each changed once
                    cur.execute("UPDATE bin SET v = 1 WHERE id = UNHEX(CONCAT(LPAD(HEX(%s), "
                                "14, '0'), '00'))", (seq,))
                    updated.append(seq)
                    time.sleep(0.004)
        finally:
            conn.close()

    writer = threading.Thread(target=update_zero_ending_keys)
    signal(proc, "execute-snapshot", tables=[f"{db}.bin"])
    proc.wait_log(f"snapshot of {db}.bin starts")
    writer.start()
    proc.wait_log(f"snapshot of {db}.bin complete", timeout=180)
    writer.join(60)
    assert len(updated) == 200
    wait_caught_up(mariadb, broker, proc_doc(proc))
    rebuilt, _ = rebuild(broker.bootstrap, f"{db}.{db}.bin")
    assert len(rebuilt) == 100_000
    changed = {bytes.fromhex(f"{seq:014x}00") for seq in updated}
    stale = [row["id"] for row in rebuilt.values() if row["id"] in changed and row["v"] == 0]
    assert stale == [], f"{len(stale)} of 200 changed rows went stale after the snapshot"


@pytest.mark.parametrize(("column", "values"), [
    # MariaDB 10.11 compares a DECIMAL with a string exactly; MySQL does it as doubles.
    ("DECIMAL(30,10)", "12345678901234567 + seq / CAST(10000000000 AS DECIMAL(30,10))"),
    # str(timedelta) of a negative or >24 h TIME reads back as a wrong bound ('-2 days, ...').
    ("TIME", "SEC_TO_TIME(CAST(seq AS SIGNED) * 7000 - 200000)"),
])
def test_typed_key_resumed_after_restart_skips_nothing(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess], column: str, values: str) -> None:
    """The resumed chunk's bound is bound with the key's own type, not as a string."""
    db = unique_name
    p = mariadb.primary
    p.execute(f"CREATE DATABASE {db}")
    p.execute(f"CREATE TABLE {db}.tk (id {column} PRIMARY KEY, v INT)")
    p.execute(f"INSERT INTO {db}.tk SELECT {values}, seq FROM {db}.seq_1_to_50")
    mariadb.wait_synced()
    proc = start(mariadb, broker, db, tmp_path, connector,
                 incremental__snapshot__chunk__size="5",
                 incremental__snapshot__chunk__delay__ms="5000")
    topic = f"{db}.{db}.tk"
    signal(proc, "execute-snapshot", tables=[f"{db}.tk"])
    wait_for(lambda: len(reads(broker, topic)) >= 5, 60, "the first chunk")
    assert proc.stop() == 0  # commits the progress after chunk 1 (chunk 2 is 5 s away)
    proc.start()
    proc.wait_log("resumes")
    signal(proc, "set-throttle", chunk_delay_ms=0)
    proc.wait_log(f"snapshot of {db}.tk complete", timeout=60)
    wait_caught_up(mariadb, broker, proc_doc(proc))
    got = {row["v"] for row in reads(broker, topic)}
    assert got == set(range(1, 51)), f"{50 - len(got)} of 50 rows lost"


def test_non_unique_surrogate_key_loses_no_rows(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    """Five rows share one surrogate value: chunked by (surrogate, primary key), all five go
    out; without a primary key such a column (or a nullable one) is refused in one line."""
    db = unique_name
    p = mariadb.primary
    p.execute(f"CREATE DATABASE {db}")
    p.execute(f"CREATE TABLE {db}.sk (id INT PRIMARY KEY, grp INT NOT NULL, v INT)")
    p.execute(f"INSERT INTO {db}.sk VALUES (1, 7, 1), (2, 7, 2), (3, 7, 3), (4, 7, 4), "
              "(5, 7, 5)")
    p.execute(f"CREATE TABLE {db}.nopk (grp INT NOT NULL, v INT)")
    p.execute(f"INSERT INTO {db}.nopk VALUES (1, 1), (1, 2)")
    p.execute(f"CREATE TABLE {db}.nul (id INT PRIMARY KEY, grp INT NULL)")
    p.execute(f"INSERT INTO {db}.nul VALUES (1, NULL), (2, 1)")
    mariadb.wait_synced()
    proc = start(mariadb, broker, db, tmp_path, connector,
                 incremental__snapshot__chunk__size="2")
    signal(proc, "execute-snapshot", tables=[f"{db}.nopk", f"{db}.nul", f"{db}.sk"],
           surrogate_key="grp")
    proc.wait_log(f"snapshot of {db}.sk complete", timeout=60)
    # "complete" is logged when the rows are handed to the producer, not when acknowledged.
    def five_reads() -> list[dict[str, Any]] | None:
        rows = reads(broker, f"{db}.{db}.sk")
        return rows if len(rows) >= 5 else None

    arrived = wait_for(five_reads, 30, "five snapshot reads of sk")
    assert sorted(r["id"] for r in arrived) == [1, 2, 3, 4, 5]
    log = proc.log()
    assert f"snapshot of {db}.nopk skipped: surrogate key 'grp' has no unique index" in log
    assert f"snapshot of {db}.nul skipped: surrogate key 'grp' is nullable" in log


def test_table_renamed_while_queued_is_skipped_and_the_snapshot_goes_on(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    db = unique_name
    p = mariadb.primary
    p.execute(f"CREATE DATABASE {db}")
    for table in ("a", "b", "c"):
        p.execute(f"CREATE TABLE {db}.{table} (id INT PRIMARY KEY, v INT)")
        p.execute(f"INSERT INTO {db}.{table} SELECT seq, seq FROM {db}.seq_1_to_2000")
    mariadb.wait_synced()
    proc = start(mariadb, broker, db, tmp_path, connector,
                 incremental__snapshot__chunk__size="200",
                 incremental__snapshot__chunk__delay__ms="200")
    signal(proc, "execute-snapshot", tables=[f"{db}.a", f"{db}.b", f"{db}.c"])
    proc.wait_log(f"snapshot of {db}.a starts")
    p.execute(f"RENAME TABLE {db}.b TO {db}.b_old")
    proc.wait_log(f"snapshot of {db}.c complete", timeout=120)
    assert f"snapshot of {db}.b skipped: table {db}.b not found" in proc.log()
    assert proc.proc is not None and proc.proc.poll() is None and proc.starts == 1
    wait_caught_up(mariadb, broker, proc_doc(proc))
    assert len(reads(broker, f"{db}.{db}.c")) == 2000
