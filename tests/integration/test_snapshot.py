"""Incremental snapshots end to end: signals, DBLog windows under writes, DDL, SIGKILL."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from connector.settings.parse import parse_config
from signals.send import build_signal, send_signal
from tests.connector_tools import (
    ConnectorProcess,
    SourcePair,
    connector_document,
    rebuild,
    source_rows,
)
from tests.integration.test_streaming import wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import produce
from tests.services import MariaDbPair
from tests.workload import insert_sequence


class Writer(threading.Thread):
    """Updates, deletes and inserts keys of one table until stopped."""

    def __init__(self, mariadb: SourcePair, db: str, table: str, max_id: int,
                 seed: int, per_second: float = 500.0) -> None:
        super().__init__(daemon=True)
        self.conn = mariadb.primary.root(db)
        self.table = table
        self.max_id = max_id
        self.rng = random.Random(seed)
        self.stop_flag = threading.Event()
        self.writes = 0
        self.interval = 1.0 / per_second
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            next_at = time.monotonic()
            with self.conn.cursor() as cur:
                while not self.stop_flag.wait(max(0.0, next_at - time.monotonic())):
                    next_at += self.interval
                    key = self.rng.randint(1, self.max_id)
                    kind = self.rng.random()
                    if kind < 0.6:
                        cur.execute(f"UPDATE {self.table} SET v = v + 1, s = %s WHERE id = %s",
                                    (f"w{self.writes}", key))
                    elif kind < 0.8:
                        cur.execute(f"DELETE FROM {self.table} WHERE id = %s", (key,))
                    else:
                        cur.execute(f"REPLACE INTO {self.table} (id, v, s) VALUES (%s, %s, %s)",
                                    (key, -self.writes, "new"))
                    self.writes += 1
        except BaseException as exc:  # noqa: BLE001 - surfaced by stop()
            self.error = exc

    def stop(self) -> int:
        if self.stop_flag.is_set():
            return self.writes
        self.stop_flag.set()
        self.join(30)
        self.conn.close()
        if self.error is not None:
            raise self.error
        return self.writes


def make_table(mariadb: SourcePair, db: str, rows: int, table: str = "big") -> None:
    mariadb.primary.execute(f"CREATE DATABASE IF NOT EXISTS {db}")
    mariadb.primary.execute(f"CREATE TABLE {db}.{table} (id INT PRIMARY KEY, v BIGINT, "
                            "s VARCHAR(40), d DECIMAL(10,3))")
    insert_sequence(mariadb, db, table, rows, "seq, seq * 3, CONCAT('row', seq), seq / 7")
    mariadb.wait_synced()


def compare(mariadb: SourcePair, broker: Broker, db: str, table: str,
            key: list[str]) -> list[dict[str, Any]]:
    rebuilt, envelopes = rebuild(broker.bootstrap, f"{db}.{db}.{table}")
    expected = source_rows(mariadb, db, table, key)
    assert rebuilt.keys() == expected.keys(), (
        f"missing {len(expected.keys() - rebuilt.keys())}, extra "
        f"{len(rebuilt.keys() - expected.keys())}")
    wrong = [k for k in expected if expected[k] != {c: rebuilt[k].get(c) for c in expected[k]}]
    assert not wrong, f"{len(wrong)} rows differ: {expected[wrong[0]]} != {rebuilt[wrong[0]]}"
    return envelopes



def start(mariadb: SourcePair, broker: Broker, db: str, workdir: Path,
          started: list[ConnectorProcess], **settings: Any) -> ConnectorProcess:
    doc = connector_document(mariadb, broker, db, **settings)
    proc = ConnectorProcess(doc, workdir)
    started.append(proc)
    proc.start()
    proc.wait_log("streaming from")
    return proc


def signal(proc: ConnectorProcess, action: str, **kwargs: Any) -> None:
    config = parse_config(json.loads(proc.config_path.read_text()))
    send_signal(config, build_signal(action, **kwargs))


def test_snapshot_under_concurrent_writes_equals_primary(
        source: SourcePair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    db = unique_name
    make_table(source, db, 200_000)
    proc = start(source, broker, db, tmp_path, connector)
    writer = Writer(source, db, "big", 200_000, seed=5)
    writer.start()
    try:
        signal(proc, "execute-snapshot", tables=[f"{db}.big"])
        proc.wait_log(f"snapshot of {db}.big complete", timeout=300)
    finally:
        writes = writer.stop()
    wait_caught_up(source, broker, proc_doc(proc))
    envelopes = compare(source, broker, db, "big", ["id"])
    reads = [e for e in envelopes if e["op"] == "r"]
    assert writes > 100
    assert len(reads) > 150_000
    assert all(e["source"]["snapshot"] == "incremental" for e in reads)


def proc_doc(proc: ConnectorProcess) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(proc.config_path.read_text())
    return doc


def test_composite_string_key_with_condition(mariadb: MariaDbPair, broker: Broker,
                                             unique_name: str, tmp_path: Path,
                                             connector: list[ConnectorProcess]) -> None:
    db = unique_name
    p = mariadb.primary
    p.execute(f"CREATE DATABASE {db}")
    p.execute(f"CREATE TABLE {db}.kv (region VARCHAR(8), name VARCHAR(30), n INT, "
              "PRIMARY KEY (region, name)) DEFAULT CHARSET=utf8mb4")
    p.execute(f"INSERT INTO {db}.kv SELECT ELT(1 + seq % 3, 'eu', 'us', 'ap'), "
              f"CONCAT('näme-', seq), seq FROM {db}.seq_1_to_5000")
    mariadb.wait_synced()
    proc = start(mariadb, broker, db, tmp_path, connector,
                 incremental__snapshot__chunk__size="300")
    signal(proc, "execute-snapshot", tables=[f"{db}.kv"], conditions=[f"{db}.kv=region <> 'ap'"])
    proc.wait_log(f"snapshot of {db}.kv complete", timeout=120)
    wait_caught_up(mariadb, broker, proc_doc(proc))
    rebuilt, envelopes = rebuild(broker.bootstrap, f"{db}.{db}.kv")
    expected = {k: v for k, v in source_rows(mariadb, db, "kv", ["region", "name"]).items()
                if v["region"] != "ap"}
    assert rebuilt == expected
    assert len({json.dumps(e["after"], sort_keys=True) for e in envelopes}) == len(envelopes)


def test_idle_source_snapshot_needs_no_heartbeat(source: SourcePair, broker: Broker,
                                                 unique_name: str, tmp_path: Path,
                                                 connector: list[ConnectorProcess]) -> None:
    db = unique_name
    make_table(source, db, 100_000, table="idle")
    proc = start(source, broker, db, tmp_path, connector, heartbeat__interval__ms="0")
    started = time.monotonic()
    signal(proc, "execute-snapshot", tables=[f"{db}.idle"])
    proc.wait_log(f"snapshot of {db}.idle complete", timeout=120)
    elapsed = time.monotonic() - started
    envelopes = compare(source, broker, db, "idle", ["id"])
    assert len(envelopes) == 100_000 and {e["op"] for e in envelopes} == {"r"}
    # 98 chunks of 1024 rows: a window waiting for heartbeats would take minutes.
    assert elapsed < 100


def test_ddl_while_chunking_reselects(source: SourcePair, broker: Broker, unique_name: str,
                                      tmp_path: Path,
                                      connector: list[ConnectorProcess]) -> None:
    db = unique_name
    make_table(source, db, 30_000, table="alt")
    proc = start(source, broker, db, tmp_path, connector,
                 incremental__snapshot__chunk__size="500",
                 incremental__snapshot__chunk__delay__ms="20")
    signal(proc, "execute-snapshot", tables=[f"{db}.alt"])
    proc.wait_log(f"snapshot of {db}.alt starts")
    time.sleep(0.5)
    source.primary.execute(f"ALTER TABLE {db}.alt ADD COLUMN extra VARCHAR(10)")
    source.primary.execute(f"UPDATE {db}.alt SET extra = 'x' WHERE id % 1000 = 0")
    time.sleep(0.3)
    source.primary.execute(f"ALTER TABLE {db}.alt DROP COLUMN s")
    proc.wait_log(f"snapshot of {db}.alt complete", timeout=120)
    wait_caught_up(source, broker, proc_doc(proc))
    rebuilt, _ = rebuild(broker.bootstrap, f"{db}.{db}.alt")
    expected = source_rows(source, db, "alt", ["id"])
    assert rebuilt.keys() == expected.keys()
    # Rows emitted after the DROP carry no `s`; rows never touched again keep the old one.
    wrong = [k for k, row in expected.items()
             if {c: rebuilt[k].get(c) for c in row} != row]
    assert not wrong, f"{len(wrong)} differ, e.g. {expected[wrong[0]]} != {rebuilt[wrong[0]]}"


def test_sigkill_mid_snapshot_resumes_not_restarts(source: SourcePair, broker: Broker,
                                                   unique_name: str, tmp_path: Path,
                                                   connector: list[ConnectorProcess]) -> None:
    db = unique_name
    make_table(source, db, 60_000, table="kill")
    proc = start(source, broker, db, tmp_path, connector,
                 incremental__snapshot__chunk__size="1000",
                 incremental__snapshot__chunk__delay__ms="30")
    signal(proc, "execute-snapshot", tables=[f"{db}.kill"])
    proc.wait_log(f"snapshot of {db}.kill starts")
    time.sleep(2.5)
    proc.kill()
    source.primary.execute(f"UPDATE {db}.kill SET v = -v WHERE id % 5000 = 1")
    proc.start()
    proc.wait_log("resumes")
    resumed = proc.log()[proc.log_offset:]
    assert f"{db}.kill: 0/" not in resumed.split("resumes", 1)[1].splitlines()[0]
    proc.wait_log(f"snapshot of {db}.kill complete", timeout=120)
    wait_caught_up(source, broker, proc_doc(proc))
    envelopes = compare(source, broker, db, "kill", ["id"])
    reads = sum(1 for e in envelopes if e["op"] == "r")
    assert 60_000 <= reads < 60_000 + 10_000  # duplicates bounded by what was in flight


def test_bad_signals_are_logged_and_skipped(mariadb: MariaDbPair, broker: Broker,
                                            unique_name: str, tmp_path: Path,
                                            connector: list[ConnectorProcess]) -> None:
    """Flavour-independent (signal parsing; pause and throttle state): MariaDB only."""
    source = mariadb
    db = unique_name
    make_table(source, db, 2_000, table="ok")
    proc = start(source, broker, db, tmp_path, connector)
    topic = f"{db}-signal"
    good = build_signal("execute-snapshot", tables=[f"{db}.ok"]).to_json()
    produce(broker.bootstrap, topic, [
        (db.encode(), b"{not json"),
        (db.encode(), b'{"type": "explode-snapshot", "data": {}}'),
        (b"someone-else", good),
        (db.encode(), build_signal("execute-snapshot", tables=[f"{db}.missing"]).to_json()),
        (db.encode(), build_signal("execute-snapshot", tables=[f"{db}.ok"],
                                   conditions=[f"{db}.ok=no_such_column > 3"]).to_json()),
        (db.encode(), good),
    ])
    proc.wait_log(f"snapshot of {db}.ok complete", timeout=60)
    skipped = [line.split(": ", 1)[1] for line in proc.log().splitlines() if " skipped: " in line]
    assert skipped == [
        (f"signal topic {topic} offset 0 skipped: value is not JSON (Expecting property name "
        "enclosed in double quotes: line 1 column 2 (char 1))"),
        (f"signal topic {topic} offset 1 skipped: unknown type 'explode-snapshot' (known: "
        "execute-snapshot, stop-snapshot, pause-snapshot, resume-snapshot, log, set-throttle)"),
        (f"signal topic {topic} offset 2 skipped: key 'someone-else' is not this connector's "
        f"topic.prefix '{db}'"),
        (f"signal at offset 3 (execute-snapshot) skipped: '{db}.missing' matches no captured "
        "table"),
        (f"signal at offset 4 (execute-snapshot) skipped: filter for {db}.ok refused (no column "
        "'no_such_column' in this table); table skipped")], skipped
    assert f"{db}.ok: 0/0 rows" not in proc.log()  # no progress before the table's bounds
    source.primary.execute(f"INSERT INTO {db}.ok VALUES (999999, 1, 'after', 0)")
    wait_caught_up(source, broker, proc_doc(proc))
    compare(source, broker, db, "ok", ["id"])


def test_pause_survives_restart_throttle_and_status(mariadb: MariaDbPair, broker: Broker,
                                                    unique_name: str, tmp_path: Path,
                                                    connector: list[ConnectorProcess]) -> None:
    """Flavour-independent (signal parsing; pause and throttle state): MariaDB only."""
    source = mariadb
    db = unique_name
    make_table(source, db, 20_000, table="slow")
    proc = start(source, broker, db, tmp_path, connector,
                 incremental__snapshot__chunk__size="500",
                 incremental__snapshot__chunk__delay__ms="100")
    signal(proc, "execute-snapshot", tables=[f"{db}.slow"])
    proc.wait_log(f"snapshot of {db}.slow starts")
    signal(proc, "pause-snapshot")
    proc.wait_log("snapshot paused")
    assert proc.stop() == 0
    for n in range(3):  # the lag status reports: three transactions the replica has, not Kafka
        source.primary.execute(f"INSERT INTO {db}.slow VALUES ({30_000 + n}, 0, 'late', 0)")
    source.wait_synced()
    status = subprocess.run([sys.executable, "-m", "connector.cli", "status", "--config",
                             str(proc.config_path), "--json"], capture_output=True, text=True,
                            timeout=60, check=True)
    report = json.loads(status.stdout)
    assert report["replica_behind"] == 3
    text = subprocess.run([sys.executable, "-m", "connector.cli", "status", "--config",
                           str(proc.config_path)], capture_output=True, text=True, timeout=60,
                          check=True).stdout
    assert f"replica position:   gtids={report['replica_gtids']} (3 transactions not yet " \
           "streamed)" in text
    assert report["snapshot"]["paused"] is True
    assert f"{db}.slow:" in report["snapshot"]["tables"][0]
    assert "rows/s" in report["snapshot"]["tables"][0]
    progress = report["snapshot"]["progress"][0]  # the same, as numbers
    assert progress["table"] == f"{db}.slow" and progress["total"] >= progress["rows"] >= 0
    assert isinstance(progress["percent"], float) and 0 <= progress["percent"] <= 100
    assert isinstance(progress["rows_per_s"], float) and isinstance(progress["estimate"], int)
    # No rest.port: the status topic's records, left UNASSIGNED by the clean stop (as
    # Connect's worker shutdown leaves them), and no instance in the lease group.
    assert (report["state"]["connector"], report["state"]["task"]) == ("UNASSIGNED",
                                                                       "UNASSIGNED")
    assert report["alive"] is False
    assert "cdc-secret-pw" not in status.stdout + status.stderr
    proc.start()
    proc.wait_log("(paused)")
    time.sleep(1.5)
    assert "complete" not in proc.log()[proc.log_offset:]
    signal(proc, "set-throttle", chunk_size=5000, chunk_delay_ms=0)
    proc.wait_log("chunk size 5000")
    signal(proc, "resume-snapshot")
    proc.wait_log(f"snapshot of {db}.slow complete", timeout=120)
    wait_caught_up(source, broker, proc_doc(proc))
    compare(source, broker, db, "slow", ["id"])
