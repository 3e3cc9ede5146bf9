"""Exactly once into Kafka (exactly.once.support=required, KIP-618) on Apache Kafka: after
SIGKILLs at random moments under writes, a read_committed consumer sees every change once.

A duplicate is a change event that appears twice: the same key and the same payload but
for the envelope's own processing time (`ts_ms`/`ts_us`/`ts_ns`). The source block (GTID,
binlog file and position, row) makes two real changes differ.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.connector_tools import ConnectorProcess, SourcePair, connector_document
from tests.integration.test_streaming import assert_tables_match, wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.workload import TABLES, Workload


def duplicates(bootstrap: str, topic: str) -> tuple[int, int]:
    """(change events, how many of them repeat an earlier one) in `topic`, read_committed."""
    seen: Counter[tuple[bytes | None, str]] = Counter()
    for msg in consume_all(bootstrap, topic):
        if msg.value() is None:
            continue  # a tombstone repeats its delete's key by design
        payload = json.loads(msg.value())["payload"]
        for stamp in ("ts_ms", "ts_us", "ts_ns"):
            payload.pop(stamp, None)
        seen[(msg.key(), json.dumps(payload, sort_keys=True))] += 1
    return sum(seen.values()), sum(n - 1 for n in seen.values())


@pytest.mark.parametrize(("flavour", "boundary"), [
    ("mariadb", "poll"), ("mysql", "connector"), ("mariadb", "interval")])
def test_sigkills_under_writes_leave_every_change_exactly_once(
        request: pytest.FixtureRequest, broker: Broker, unique_name: str, tmp_path: Path,
        flavour: str, boundary: str) -> None:
    source: SourcePair = request.getfixturevalue(flavour)
    db = unique_name
    rng = random.Random(11)
    workload = Workload(source, db, seed=29)
    workload.create()
    source.wait_synced()
    doc = connector_document(source, broker, db, **{
        "exactly.once.support": "required", "transaction.boundary": boundary,
        "transaction.boundary.interval.ms": "300"})
    conn = ConnectorProcess(doc, tmp_path)
    conn.start()
    writing = threading.Event()
    writing.set()

    def write() -> None:  # about 50 transactions a second, each of 1 to 200 rows
        while writing.is_set():
            workload.step()
            time.sleep(0.02)

    writer = threading.Thread(target=write)
    try:
        conn.wait_log("streaming from the position at launch")
        writer.start()
        for _ in range(3):
            # Killed while changes stream: records sent, their transaction not committed.
            time.sleep(rng.uniform(1.0, 3.0))
            conn.kill()
            conn.start()
            conn.wait_log("resuming from committed offsets")
        time.sleep(1.0)
        writing.clear()
        writer.join()
        workload.close()
        wait_caught_up(source, broker, doc)
        assert conn.stop() == 0
    finally:
        writing.clear()
        if writer.is_alive():
            writer.join()
        conn.ensure_stopped()
    assert_tables_match(source, broker, db)
    committed = {t: duplicates(broker.bootstrap, f"{db}.{db}.{t}") for t in TABLES}
    assert all(n > 0 for n, _ in committed.values()), committed
    assert {t: d for t, (_, d) in committed.items()} == {t: 0 for t in TABLES}, committed
