"""Streaming rows/s: the reader's decoding alone vs the connector end to end.

Run per flavour (`--flavour mariadb|mysql|both`, or BENCH_FLAVOUR; default both, each on its
own services). Two workloads are written to the primary, one after the other, and each is
measured on the replica's binlog between its start and end GTID positions (MariaDB: GTID
positions; MySQL: GTID sets):
  bulk  -- 200,000 rows inserted 2,000 per statement;
  small -- 30,000 transactions of 1-3 rows (inserts, updates, deletes).
"Decode" is the reader's decoding alone (its framing and row decoders on the cdc user's
BinLogStreamReader connection) that touches every row and stops after the end position's
commit; "library decode" the same with mysql-replication's own framing. "End to end" runs
the connector's Engine in this process from seeded offsets at the start position until
every record is acknowledged by Kafka and the stream position covers the end position.
"Produce" is confluent-kafka alone producing the records the connector produced (same keys,
values and producer settings) to a topic of its own: the Kafka side's raw limit.
Debezium (bench/debezium.py) streams the same range (MariaDB: from its own replica that
reports MySQL 5.7; MySQL: from the same replica, natively): started before
the workload and stopped (its offsets then point before it), then started again once the
workload is written, and timed from its first batch to the last row's record.
Debezium on Connect (bench/debezium_connect.py) is the same connector on a Kafka Connect
worker producing to the same broker: created before the workload, stopped once its first
heartbeat is in Kafka, resumed once the workload is written, and timed as gtidmark is, from
its binlog connection to the last row's record acknowledged in its topic (BENCH_DEBEZIUM=0
leaves both out; `embedded` or `connect` runs one). A second table splits the CPU of the
end-to-end run by process and thread (bench/cpu.py): the pipeline competes with itself for
two cores.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    EngineThread,
    Services,
    connector_config,
    debezium_peers,
    decode_only,
    flavours_wanted,
    gtid_pos,
    print_table,
    produce_only,
    quiet_logs,
    scaled,
    seed_offsets,
    services,
)
from bench.cpu import CpuSplit
from bench.debezium import DebeziumRun, properties
from bench.debezium_connect import ConnectPeer
from connector.binlog.framing import library_frames
from connector.gtid import Position
from tests.workload import insert_sequence

BULK_PER_STATEMENT = 2_000
BULK_ROWS = scaled(100) * BULK_PER_STATEMENT
SMALL_TRANSACTIONS = scaled(30_000)
TARGET = 0.9  # of the slower of decode only and confluent-kafka alone (issue #33)
WITH_DEBEZIUM, WITH_CONNECT = debezium_peers()
CPU_COLUMNS = ("reader process", "binlog-feeder", "engine", "rdkafka", "broker", "replica")
TABLE = ("CREATE TABLE {db}.t (id BIGINT PRIMARY KEY, a INT NOT NULL, b VARCHAR(40), "
         "c DECIMAL(12,2), d DATETIME(3), e TEXT)")


def write_bulk(svc: Services, db: str) -> int:
    """Inserts only; returns the number of deleted rows (0)."""
    for lo in range(1, BULK_ROWS + 1, BULK_PER_STATEMENT):
        insert_sequence(svc.pair, db, "t", BULK_PER_STATEMENT,
                        "seq, seq % 1000, CONCAT('name-', seq), seq / 100, "
                        "TIMESTAMP'2024-01-01 00:00:00.123' + INTERVAL seq SECOND, "
                        "REPEAT('x', 20)", first=lo)
    return 0


def write_small(svc: Services, db: str) -> int:
    """Autocommit statements, 100 per round trip: each one transaction; returns deletes."""
    from pymysql.constants import CLIENT

    rng = random.Random(7)
    conn = svc.pair.primary.root(db, client_flag=CLIENT.MULTI_STATEMENTS)
    live: list[int] = []
    next_id = 1
    statements: list[str] = []
    deletes = 0
    try:
        with conn.cursor() as cur:
            for _ in range(SMALL_TRANSACTIONS):
                kind = rng.random()
                if kind < 0.5 or len(live) < 10:
                    n = rng.randint(1, 3)
                    values = ",".join(f"({i}, {i % 1000}, 'name-{i}', {i / 100:.2f}, "
                                      f"'2024-01-01 00:00:00.123', 'xxxxxxxxxxxxxxxxxxxx')"
                                      for i in range(next_id, next_id + n))
                    live.extend(range(next_id, next_id + n))
                    next_id += n
                    statements.append(f"INSERT INTO t VALUES {values}")
                elif kind < 0.8:
                    ids = rng.sample(live[-1000:], rng.randint(1, 2))
                    statements.append(f"UPDATE t SET a = a + 1, b = 'upd' WHERE id IN "
                                      f"({','.join(map(str, ids))})")
                else:
                    victim = live.pop(rng.randrange(max(0, len(live) - 1000), len(live)))
                    statements.append(f"DELETE FROM t WHERE id = {victim}")
                    deletes += 1
                if len(statements) == 100:
                    _run_many(cur, statements)
            if statements:
                _run_many(cur, statements)
    finally:
        conn.close()
    return deletes


def _run_many(cur: Any, statements: list[str]) -> None:
    cur.execute(";".join(statements))
    while cur.nextset():
        pass
    statements.clear()


def end_to_end(svc: Services, prefix: str, start: str, end: Position,
               **settings: Any) -> dict[str, Any]:
    config = connector_config(svc, prefix, snapshot__mode="no_data", **settings)
    seed_offsets(config, start)
    runner = EngineThread(config)
    began = time.monotonic()
    runner.start()
    try:
        engine = runner.engine
        first = runner.wait(lambda: engine.reader is not None and engine.reader.connected.is_set(),
                            60, "the binlog reader to connect", interval=0.002)
        assert engine.reader is not None and engine.reader.pid is not None
        assert svc.broker.proc is not None and svc.pair.replica.proc is not None
        split = CpuSplit({"reader process": engine.reader.pid, "broker": svc.broker.proc.pid,
                          "replica": svc.pair.replica.proc.pid})
        done = runner.wait(lambda: engine.position.covers(end) and runner.acked_all(), 300,
                           f"every record up to {end} to be acknowledged (or committed)")
        cpu = split.stop()
        rows = engine.dispatcher.rows_out
        records = engine.sink.produced
    finally:
        code = runner.stop()
    if code != 0:
        raise RuntimeError(f"engine exited with {code}")
    return {"rows": rows, "records": records, "startup": first - began, "seconds": done - first,
            "cpu": cpu, "config": config}


class DebeziumStream:
    """Debezium positioned before a workload, then timed over it from its own replica."""

    def __init__(self, svc: Services, db: str) -> None:
        self.svc, self.db = svc, db
        self.workdir = svc.base / f"dbz-{db}"
        self.topic = f"{db}.{db}.t"

    def position_before(self) -> None:
        """Start, wait for one heartbeat (its offset is the current position), stop."""
        run = self._run(**{"heartbeat.interval.ms": 100})
        run.start()
        try:
            run.wait_count(f"__debezium-heartbeat.{self.db}", 1, 60)
        finally:
            run.stop()
        run.out_path.unlink()

    def catch_up(self, records: int) -> float:
        """Start from the stored offsets; seconds to hand over `records` records of t."""
        run = self._run()
        run.start(ready=None)
        try:
            seen = run.wait_count(self.topic, records, 600)
        finally:
            run.stop()
        # Timed from the first batch: scale to every record, that batch included.
        timed = max(1, seen["counts"][self.topic] - seen["first_count"])
        return (seen["last"] - seen["first"]) * records / timed

    def _run(self, **overrides: Any) -> DebeziumRun:
        pair = self.svc.debezium
        return DebeziumRun(properties(pair, self.db, self.workdir, 1024, **overrides),
                           self.workdir)


class ConnectStream:
    """Debezium on the Connect worker positioned before a workload, then timed over it,
    from its binlog connection to the last record acknowledged in its topic."""

    def __init__(self, svc: Services, db: str) -> None:
        assert svc.worker is not None
        pair = svc.debezium
        # Heartbeats every 100 ms: the first one's offset is the position before the workload.
        self.peer = ConnectPeer(svc.worker, properties(
            pair, db, svc.base / f"dbzc-{db}", 1024, **{"heartbeat.interval.ms": 100}))
        self.db = db

    def position_before(self) -> None:
        """Create, wait for one heartbeat in Kafka (offsets committed with it), stop."""
        self.peer.start()
        self.peer.wait_count(f"__debezium-heartbeat.{self.db}", 1, 60)
        self.peer.pause()

    def catch_up(self, records: int) -> tuple[float, float]:
        """Resume from its committed offsets; seconds from its binlog connection to
        `records` records of t in Kafka, and the seconds from resume to that connection."""
        resumed = time.time()
        try:
            self.peer.start()
            done = self.peer.wait_count(f"{self.db}.{self.db}.t", records, 1200)
            connected = self.peer.connected_at()
        finally:
            self.peer.remove()
        return done - connected, connected - resumed


def measure(svc: Services, name: str, writer: Any) -> tuple[list[Any], list[Any], list[Any]]:
    db = f"b_{name}"
    svc.pair.primary.execute(f"CREATE DATABASE {db}")
    svc.pair.primary.execute(TABLE.format(db=db))
    start = gtid_pos(svc)
    dbz = DebeziumStream(svc, db)
    if WITH_DEBEZIUM:
        dbz.position_before()
    connect = ConnectStream(svc, db) if WITH_CONNECT else None
    if connect is not None:
        connect.position_before()
    began = time.monotonic()
    deletes = writer(svc, db)
    end_text = gtid_pos(svc)
    print(f"{name}: workload written and replicated in {time.monotonic() - began:.1f}s "
          f"({start} -> {end_text})", flush=True)
    flavour = svc.flavour
    end = flavour.position(end_text)
    settings = svc.pair.cdc_settings()
    decode_cpu = time.process_time()
    decoded, decode_s = decode_only(settings, 7001, flavour, start, end)
    decode_cpu = time.process_time() - decode_cpu
    e2e = end_to_end(svc, db, start, end)
    # The same range again with exactly.once.support=required, under a topic prefix (and
    # so topics and offsets) of its own.
    eos = end_to_end(svc, f"{db}_eos", start, end, **{"exactly.once.support": "required",
                                                      "database.include.list": db})
    assert svc.broker.proc is not None
    raw = produce_only(e2e["config"], f"{db}.{db}.t", svc.broker.proc.pid)
    decoded2, decode2_s = decode_only(settings, 7002, flavour, start, end)
    library, library_s = decode_only(settings, 7003, flavour, start, end, library_frames)
    # a delete's tombstone is a record too
    dbz_s = dbz.catch_up(decoded + deletes) if WITH_DEBEZIUM else float("nan")
    connect_s, connect_startup = (connect.catch_up(decoded + deletes) if connect is not None
                                  else (float("nan"), float("nan")))
    decode_rate = max(decoded / decode_s, decoded2 / decode2_s)
    e2e_rate = e2e["rows"] / e2e["seconds"]
    dbz_rate = decoded / dbz_s
    connect_rate = decoded / connect_s
    if e2e["rows"] != decoded:
        print(f"{name}: WARNING the connector emitted {e2e['rows']} rows, decoding saw {decoded}")
    raw_rate = raw["records"] / raw["seconds"]
    # confluent-kafka alone in rows/s: its records/s at the end-to-end run's rows per record
    produce_rate = raw_rate * e2e["rows"] / e2e["records"]
    ratio = e2e_rate / min(decode_rate, produce_rate)
    per_row = 1e6 / decoded
    cpu = e2e["cpu"]
    label = svc.label(name)
    split = [label, decode_cpu * per_row, *(cpu.get(c, 0.0) * per_row for c in CPU_COLUMNS),
             sum(cpu.values()) * per_row, e2e["seconds"] * per_row]
    e2e_records = e2e["records"] / e2e["seconds"]
    # The two limits each had both cores to themselves; the pipeline runs both on the same
    # two: their CPU per row added bounds it before any work of gtidmark's own.
    limits_cpu = decode_cpu * per_row + raw["cpu"] * 1e6 / raw["records"] * e2e["records"] \
        / e2e["rows"]
    bound = 2e6 / limits_cpu
    produced = [label, raw["records"], raw["bytes"] / 1e6, raw_rate, e2e_records,
                e2e_records / raw_rate, raw["cpu"] * 1e6 / raw["records"], limits_cpu, bound,
                bound / min(decode_rate, produce_rate), e2e_rate / bound]
    eos_rate = eos["rows"] / eos["seconds"]
    return [label, decoded, e2e["records"], decode_rate, library / library_s, produce_rate,
            e2e_rate, e2e_rate / decode_rate, e2e_rate / produce_rate, ratio,
            "yes" if ratio >= TARGET else "NO", eos_rate, eos_rate / e2e_rate, dbz_rate,
            e2e_rate / dbz_rate, connect_rate, e2e_rate / connect_rate, e2e["startup"],
            connect_startup], split, produced


def main(argv: list[str] | None = None) -> int:
    flavours = flavours_wanted(__doc__.splitlines()[0] if __doc__ else None, argv)
    quiet_logs()
    for flavour in flavours:
        run(flavour)
    return 0


def run(flavour: str) -> None:
    results, splits, produced = [], [], []
    with services(flavour, connect=WITH_CONNECT) as svc:
        for name, writer in (("bulk", write_bulk), ("small", write_small)):
            result, split, raw = measure(svc, name, writer)
            results.append(result)
            splits.append(split)
            produced.append(raw)
        report(svc, results, splits, produced)


def report(svc: Services, results: list[Any], splits: list[Any], produced: list[Any]) -> None:
    print_table(svc.title("Streaming: binlog -> acknowledged in Kafka (JSON with schemas, "
                          "1 partition)"),
                ["workload", "rows", "records", "decode rows/s", "library decode rows/s",
                 "confluent-kafka rows/s", "gtidmark rows/s", "vs decode", "vs confluent-kafka",
                 "vs slower limit", f">={TARGET}x", "exactly once rows/s", "vs at-least-once",
                 "Debezium embedded rows/s", "vs embedded", "Debezium on Connect rows/s",
                 "vs Connect", "startup s", "Connect startup s"],
                results)
    print("decode rows/s: the better of two passes of the reader's decoding alone over the same "
          "range (its own framing, connector/binlog/framing.py, and compiled row decoder; "
          "no transactions built or sent); library decode rows/s: one pass with "
          "mysql-replication's own framing (the reader before framing.py); confluent-kafka "
          "rows/s: the Produce table's records/s below, in rows (the end-to-end run's rows "
          "per record); gtidmark rows/s: "
          "from the reader's first event to the last acknowledgement "
          "(startup, shown apart, is offsets load + topic checks + connect); exactly once "
          "rows/s: the same with exactly.once.support=required, to the commit of the "
          "transaction holding the last record (transaction.boundary=poll); Debezium "
          "rows/s: Debezium 3.6 embedded, JSON converters, first batch to last record "
          "handed to its consumer (not produced to Kafka); Debezium on Connect rows/s: "
          "Debezium 3.6 on a Kafka Connect 4.3 worker producing to the same broker "
          "(JsonConverter with schemas), from its task's binlog connection (the worker's "
          "log) to the last record in its topic (high watermark); Connect startup: resume "
          "to that connection; vs: gtidmark rows/s over the peer's; vs slower limit: over the "
          "lower of decode and confluent-kafka rows/s (the target).")
    print_table(svc.title("CPU microseconds per row of the end-to-end run, by process and "
                          "thread"),
                ["workload", "decode alone", *CPU_COLUMNS, "all", "wall"], splits)
    print("decode alone: this process during the first decode pass; reader process: the "
          "connector's binlog reader child (decoding, transactions, pickling); binlog-feeder: "
          "unpickling into the engine's queue; engine: envelopes and produce calls; rdkafka: "
          f"librdkafka's threads; broker, replica: the Kafka broker and the {svc.server} "
          "replica serving the binlog; all: their sum, against two cores.")
    print_table(svc.title("Produce: the connector's records again from confluent-kafka alone"),
                ["workload", "records", "MB", "confluent-kafka records/s",
                 "gtidmark records/s", "gtidmark / confluent-kafka", "its CPU us/record",
                 "limits' CPU us/row", "2-core bound rows/s", "bound / slower limit",
                 "gtidmark / bound"], produced)
    print("confluent-kafka records/s: a bare Producer (the connector's producer settings, one "
          "delivery callback) sending the same keys and values, read back from the "
          "connector's topic, to a topic of its own, first produce call to last "
          "acknowledgement; gtidmark records/s: the end-to-end run's records (a delete's "
          "tombstone included) over its time; its CPU: this process's threads (librdkafka's) "
          "and the broker's; limits' CPU: decode alone plus that, per row; 2-core bound: two "
          "cores over the limits' CPU per row, the most a pipeline doing both on these two "
          "cores could reach with no work of its own (the replica serving the binlog left out).",
          flush=True)


if __name__ == "__main__":
    sys.exit(main())
