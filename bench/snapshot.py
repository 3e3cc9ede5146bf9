"""Incremental snapshot rows/s vs a plain pymysql SELECT, and streaming lag under load.

Run per flavour (`--flavour mariadb|mysql|both`, or BENCH_FLAVOUR; default both, each on its
own services).
1. Idle: a 1,000,000-row table is snapshotted by the connector's Engine (in this process)
   from the execute-snapshot signal until the table is complete and every `r` record is
   acknowledged by Kafka. The raw limit is pymysql reading the same rows from the replica
   as the cdc user: keyset chunks of the connector's chunk size (the ratio's reference)
   and one full scan (shown too). Debezium 3.6 (bench/debezium.py) then runs its incremental
   snapshot of the same table, timed from the signal until the table's last `r` record
   reaches its consumer. MariaDB: from its own writable replica, execute-snapshot inserted
   into its signal table. MySQL: on the same read-only replica gtidmark reads, Debezium's
   read-only incremental snapshot (GTID-set watermarks), execute-snapshot produced to its
   Kafka signal topic.
2. Under load: the connector runs as its own process (`gtidmark run`) and snapshots the
   table again while the primary takes a steady 1,000 inserts/s into another captured
   table; each row carries its own wall-clock time, and a consumer here measures when its
   change event is readable in Kafka. Lag p50/p99 covers the events written while the
   snapshot ran.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pymysql
from confluent_kafka import Consumer, TopicPartition

from bench.common import (
    EngineThread,
    Services,
    connector_config,
    debezium_peers,
    flavours_wanted,
    print_table,
    produce_only,
    quiet_logs,
    scaled,
    services,
    synced,
)
from bench.cpu import CpuSplit
from bench.debezium import (
    DebeziumRun,
    create_signal_table,
    properties,
    read_only_properties,
    signal_kafka,
    signal_table,
    signal_topic,
)
from bench.debezium_connect import ConnectPeer
from connector.snapshot.chunks import chunk_query
from signals.send import build_signal, send_signal
from tests.connector_tools import ConnectorProcess, connector_document
from tests.kafka_tools import create_topic
from tests.mysql_services import MySqlPair
from tests.workload import insert_sequence

STEP = 50_000
ROWS = scaled(20) * STEP
COLUMNS = ("id", "v", "s", "d")  # big's, named as the connector's chunk SELECT names them
WRITES_PER_SECOND = 1_000
DB = "snap"
TARGET_RATIO, TARGET_P99, TARGET_VS_DEBEZIUM = 0.8, 0.25, 3.0  # issues #11 and #33
CPU_COLUMNS = ("chunk reader", "chunk-reader-feeder", "engine", "rdkafka", "broker", "replica",
               "binlog reader")
WITH_DEBEZIUM, WITH_CONNECT = debezium_peers()


def make_table(svc: Services) -> None:
    p = svc.pair.primary
    p.execute(f"CREATE DATABASE {DB}")
    p.execute(f"CREATE TABLE {DB}.big (id INT PRIMARY KEY, v BIGINT, s VARCHAR(40), "
              "d DECIMAL(10,3))")
    p.execute(f"CREATE TABLE {DB}.lag (id BIGINT AUTO_INCREMENT PRIMARY KEY, ts DOUBLE, "
              "pad VARCHAR(20))")
    for lo in range(1, ROWS + 1, STEP):
        insert_sequence(svc.pair, DB, "big", STEP, "seq, seq * 3, CONCAT('row', seq), seq / 7",
                        first=lo)
    synced(svc)


def plain_select(svc: Services, chunk: int | None) -> tuple[int, float, float]:
    """pymysql on the replica as the cdc user: keyset chunks of `chunk` rows, or one scan;
    (rows, seconds, CPU seconds of this process)."""
    conn = pymysql.connect(**svc.pair.cdc_settings())
    rows = 0
    began, cpu = time.monotonic(), time.process_time()
    try:
        with conn.cursor() as cur:
            if chunk is None:
                cur.execute(f"SELECT * FROM {DB}.big ORDER BY id")
                rows = len(cur.fetchall())
            else:
                last: tuple[Any, ...] | None = None
                while True:
                    sql, params = chunk_query(DB, "big", COLUMNS, ["id"], last, None, chunk)
                    cur.execute(sql, params)
                    got = cur.fetchall()
                    if not got:
                        break
                    rows += len(got)
                    last = (got[-1][0],)
    finally:
        conn.close()
    return rows, time.monotonic() - began, time.process_time() - cpu


def idle_snapshot(svc: Services, **settings: Any) -> dict[str, Any]:
    config = connector_config(svc, DB, snapshot__mode="no_data", **settings)
    runner = EngineThread(config)
    runner.start()
    try:
        engine = runner.engine
        runner.wait(lambda: engine.reader is not None and engine.reader.connected.is_set(),
                    60, "the binlog reader to connect")
        assert svc.broker.proc is not None and svc.pair.replica.proc is not None
        split = CpuSplit({"broker": svc.broker.proc.pid, "replica": svc.pair.replica.proc.pid},
                         {"connector.snapshot.chunk_reader": "chunk reader",
                          "connector.binlog.process": "binlog reader"})
        began = time.monotonic()
        send_signal(config, build_signal("execute-snapshot", tables=[f"{DB}.big"]))
        done = runner.wait(lambda: f"{DB}.big" in engine.snapshots.completed
                           and runner.acked_all(), 600, "the snapshot to complete")
        cpu = split.stop()
        records = engine.sink.produced
    finally:
        runner.stop()
    return {"rows": records, "seconds": done - began, "chunk": config.chunk_size, "cpu": cpu,
            "config": config}


def debezium_snapshot(svc: Services, chunk: int) -> dict[str, Any]:
    """Debezium's incremental snapshot of the same table, signal to last `r` handed over."""
    workdir = svc.base / "dbz-snap"
    pair = svc.debezium
    if isinstance(pair, MySqlPair):
        create_topic(svc.broker.bootstrap, signal_topic(DB))
        props = read_only_properties(pair, DB, workdir, chunk, svc.broker.bootstrap)
    else:
        create_signal_table(pair, DB)
        props = properties(pair, DB, workdir, chunk)
    run = DebeziumRun(props, workdir)
    run.start()
    try:
        began = _signal(svc, signal_topic(DB))
        seen = run.wait_count(f"{DB}.{DB}.big", ROWS, 1200)
    finally:
        run.stop()
    return {"rows": seen["counts"][f"{DB}.{DB}.big"], "seconds": seen["last"] - began}


def connect_snapshot(svc: Services, chunk: int) -> dict[str, Any]:
    """The same incremental snapshot by Debezium on the Connect worker, from the signal
    until the table's last `r` record is acknowledged in its topic (on MySQL from a signal
    topic of its own: the embedded peer's holds that peer's signal)."""
    assert svc.worker is not None
    workdir = svc.base / "dbzc-snap"
    pair = svc.debezium
    signals = f"{signal_topic(DB)}-connect"
    if isinstance(pair, MySqlPair):
        create_topic(svc.broker.bootstrap, signals)
        props = read_only_properties(pair, DB, workdir, chunk, svc.broker.bootstrap, signals)
    else:
        create_signal_table(pair, DB)
        props = properties(pair, DB, workdir, chunk)
    peer = ConnectPeer(svc.worker, props)
    try:
        peer.start()
        began = _signal(svc, signals)
        done = peer.wait_count(f"{DB}.{DB}.big", ROWS, 1200)
        rows = peer.count(f"{DB}.{DB}.big")
    finally:
        peer.remove()
    return {"rows": rows, "seconds": done - began}


def _signal(svc: Services, topic: str) -> float:
    """execute-snapshot of big: on MySQL to the Kafka `topic`, on MariaDB into the signal
    table; the time.time() just before."""
    if isinstance(svc.debezium, MySqlPair):
        return signal_kafka(svc.broker.bootstrap, topic, DB, "big")
    return signal_table(svc.debezium, DB, "big")


class Writer(threading.Thread):
    """Autocommit inserts at a steady rate; each row holds time.time() taken just before."""

    def __init__(self, svc: Services) -> None:
        super().__init__(daemon=True, name="writer")
        self.conn = svc.pair.primary.root(DB)
        self.stopping = threading.Event()
        self.writes = 0

    def run(self) -> None:
        interval = 1.0 / WRITES_PER_SECOND
        next_at = time.monotonic()
        with self.conn.cursor() as cur:
            while not self.stopping.is_set():
                delay = next_at - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                next_at += interval
                # qualified: LAG is a reserved word on MySQL 8+
                cur.execute(f"INSERT INTO {DB}.lag (ts, pad) VALUES (%s, 'xxxxxxxxxxxxxxxx')",
                            (time.time(),))
                self.writes += 1
        self.conn.close()


class LagReader(threading.Thread):
    """Consumes the lag table's topic; records (written at, seen at) per event."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True, name="lag-reader")
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-lag",
                                  "enable.auto.commit": False, "fetch.wait.max.ms": 10,
                                  "fetch.min.bytes": 1})
        self.consumer.assign([TopicPartition(topic, 0, 0)])
        self.stopping = threading.Event()
        self.samples: list[tuple[float, float]] = []

    def run(self) -> None:
        while not self.stopping.is_set():
            for msg in self.consumer.consume(1000, 0.05):
                seen = time.time()
                raw = msg.value()
                if msg.error() is not None or raw is None:
                    continue
                after = json.loads(raw)["payload"]["after"]
                if after is not None:
                    self.samples.append((after["ts"], seen))
        self.consumer.close()


def snapshot_under_load(svc: Services, workdir: Path) -> dict[str, Any]:
    prefix = f"{DB}2"
    doc = connector_document(svc.pair, svc.broker, prefix, snapshot__mode="no_data",
                             database__include__list=DB)
    create_topic(svc.broker.bootstrap, f"{prefix}.{DB}.lag")
    proc = ConnectorProcess(doc, workdir)
    proc.start()
    writer = Writer(svc)
    reader = LagReader(svc.broker.bootstrap, f"{prefix}.{DB}.lag")
    try:
        proc.wait_log("streaming from")
        reader.start()
        writer.start()
        time.sleep(2.0)  # steady state before the snapshot starts
        config = connector_config(svc, prefix, database__include__list=DB)
        began = time.time()
        began_writes = writer.writes
        send_signal(config, build_signal("execute-snapshot", tables=[f"{DB}.big"]))
        proc.wait_log(f"snapshot of {DB}.big complete", timeout=600)
        ended = time.time()
        writes = writer.writes - began_writes
        time.sleep(1.0)
    finally:
        writer.stopping.set()
        writer.join(10)
        time.sleep(1.0)
        reader.stopping.set()
        reader.join(10)
        proc.ensure_stopped()
    lags = sorted(seen - written for written, seen in reader.samples if began <= written <= ended)
    if not lags:
        raise RuntimeError("no change events of the lag table were seen during the snapshot")
    return {"seconds": ended - began, "writes_per_s": writes / (ended - began),
            "events": len(lags), "p50": lags[len(lags) // 2],
            "p99": lags[min(len(lags) - 1, int(len(lags) * 0.99))], "max": lags[-1]}


def print_idle(svc: Services, snap: dict[str, Any], peers: list[tuple[str, dict[str, Any]]],
               chunked: tuple[int, float, float], scan: tuple[int, float, float],
               raw: dict[str, Any]) -> None:
    """The idle snapshot's table; `peers`: (Debezium peer's label, its result); `raw`:
    confluent-kafka alone producing the snapshot's records (bench.common.produce_only)."""
    rate = snap["rows"] / snap["seconds"]
    chunked_rate = chunked[0] / chunked[1]
    ratio = rate / chunked_rate
    read_only = isinstance(svc.debezium, MySqlPair)
    kind = "read-only incremental" if read_only else "incremental"
    signal = "Kafka signal" if read_only else "signal"
    rows: list[list[Any]] = [["gtidmark snapshot (signal -> all r acked in Kafka)",
                              snap["rows"], snap["seconds"], rate, ratio,
                              "yes" if ratio >= TARGET_RATIO else f"NO (>= {TARGET_RATIO}x)"]]
    for label, dbz in peers:
        where = "acked in Kafka" if label == "on Connect" else "at its consumer"
        dbz_rate = dbz["rows"] / dbz["seconds"]
        rows.append([f"Debezium 3.6 {label} {kind} ({signal} -> all r {where})", dbz["rows"],
                     dbz["seconds"], dbz_rate, dbz_rate / chunked_rate, ""])
    rows += [[f"pymysql SELECT, keyset chunks of {snap['chunk']} (reference)",
              chunked[0], chunked[1], chunked_rate, 1.0, ""],
             ["pymysql SELECT, one full scan", scan[0], scan[1], scan[0] / scan[1],
              scan[0] / scan[1] / chunked_rate, ""]]
    print_table(svc.title(f"Incremental snapshot of {ROWS:,} rows (idle source, chunk size "
                          f"{snap['chunk']})"),
                ["what", "rows", "seconds", "rows/s", "vs chunked SELECT", "target met"], rows)
    for label, dbz in peers:
        vs = rate / (dbz["rows"] / dbz["seconds"])
        print(f"gtidmark / Debezium {label}: {vs:.2f}x (target >= {TARGET_VS_DEBEZIUM:.0f}x: "
              f"{'yes' if vs >= TARGET_VS_DEBEZIUM else 'NO'})", flush=True)
    per_row = 1e6 / snap["rows"]
    cpu = snap["cpu"]
    select_cpu, produce_cpu = chunked[2] * 1e6 / chunked[0], raw["cpu"] * 1e6 / raw["records"]
    bound = 2e6 / (select_cpu + produce_cpu)
    print_table(svc.title("CPU microseconds per row of gtidmark's snapshot, by process and "
                          "thread"),
                ["SELECT alone", "produce alone", *CPU_COLUMNS, "all", "wall"],
                [[select_cpu, produce_cpu, *(cpu.get(c, 0.0) * per_row for c in CPU_COLUMNS),
                  sum(cpu.values()) * per_row, snap["seconds"] * per_row]])
    print(f"confluent-kafka alone sending the snapshot's records: "
          f"{raw['records'] / raw['seconds']:,.0f} records/s. The two limits on the same two "
          f"cores (their CPU per row added): at most {bound:,.0f} rows/s, "
          f"{bound / chunked_rate:.2f}x of the chunked SELECT; gtidmark {rate / bound:.2f}x of "
          "that bound.")
    print("SELECT alone: this process reading the keyset chunks with pymysql; produce alone: "
          "a bare confluent-kafka producer sending the same records (its threads and the "
          "broker); chunk reader: "
          "the connector's SELECT child (rows read, converted, key and after JSON written); "
          "chunk-reader-feeder: unpickling its answers; engine: windows, records, produce "
          "calls; rdkafka: librdkafka's threads; broker, replica: the Kafka broker and the "
          f"{svc.server} replica; binlog reader: the streaming child meanwhile; all: their "
          "sum (other threads of this process included), against two cores.", flush=True)


def main(argv: list[str] | None = None) -> int:
    flavours = flavours_wanted(__doc__.splitlines()[0] if __doc__ else None, argv)
    quiet_logs()
    for flavour in flavours:
        run(flavour)
    return 0


def run(flavour: str) -> None:
    with services(flavour, connect=WITH_CONNECT) as svc:
        began = time.monotonic()
        make_table(svc)
        print(f"{ROWS:,} rows written and replicated in {time.monotonic() - began:.1f}s",
              flush=True)
        snap = idle_snapshot(svc)
        eos = idle_snapshot(svc, **{"exactly.once.support": "required",
                                    "offset.storage.topic": f"{DB}-offsets-eos"})
        print(f"exactly once (exactly.once.support=required): {eos['rows'] / eos['seconds']:,.0f}"
              f" rows/s, {eos['rows'] / eos['seconds'] / (snap['rows'] / snap['seconds']):.2f}x "
              "of at-least-once", flush=True)
        chunked = plain_select(svc, snap["chunk"])
        scan = plain_select(svc, None)
        peers = []
        if WITH_DEBEZIUM:
            peers.append(("embedded", debezium_snapshot(svc, snap["chunk"])))
        if WITH_CONNECT:
            peers.append(("on Connect", connect_snapshot(svc, snap["chunk"])))
        assert svc.broker.proc is not None
        raw = produce_only(snap["config"], f"{DB}.{DB}.big", svc.broker.proc.pid)
        print_idle(svc, snap, peers, chunked, scan, raw)  # before the part under load (may time out)
        loaded = snapshot_under_load(svc, svc.base)
        title = svc.title(f"Streaming lag while the snapshot runs under {WRITES_PER_SECOND:,} "
                          "inserts/s (primary commit -> consumable in Kafka)")
    print_table(title, ["snapshot s", "writes/s", "events", "p50 s", "p99 s", "max s",
                        f"p99 < {TARGET_P99:g}s"],
                [[loaded["seconds"], loaded["writes_per_s"], loaded["events"], loaded["p50"],
                  loaded["p99"], loaded["max"], "yes" if loaded["p99"] < TARGET_P99 else "NO"]])


if __name__ == "__main__":
    sys.exit(main())
