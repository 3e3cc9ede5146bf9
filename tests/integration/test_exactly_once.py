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
from typing import Any

import pytest

from connector.kafka.sink import DeliveryFailed
from connector.kafka.transactions import TransactionalSink
from tests.connector_tools import (
    ConnectorProcess,
    SourcePair,
    connector_document,
    wait_until,
)
from tests.ha_tools import freeze, leading_group, thaw_until_stepped_down, wait_covered
from tests.integration.test_snapshot import Writer, compare
from tests.integration.test_streaming import assert_tables_match, wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, create_topic
from tests.services import MariaDbPair
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


def test_a_second_producer_of_the_transactional_id_fences_the_first(
        broker: Broker, unique_name: str) -> None:
    """What a new leader's start does to a frozen one: its open transaction is aborted and
    its commit refused at the broker, so a read_committed reader sees only the new one's."""
    topic = f"{unique_name}.records"
    create_topic(broker.bootstrap, topic, 1)
    settings = {"bootstrap.servers": broker.bootstrap}
    tid = f"gtidmark-{unique_name}-0"
    old = TransactionalSink(settings, tid)
    old.open(30)
    old.send(topic, b"k", b"from the old leader")
    old.flush(30)
    new = TransactionalSink(settings, tid)
    new.open(30)
    new.send(topic, b"k", b"from the new leader")
    with pytest.raises(DeliveryFailed, match=f"another instance took transactional.id {tid}") \
            as refused:
        old.commit((topic, b"offsets", b"old", 0), 30, wait=True)
    assert refused.value.restart
    new.commit((topic, b"offsets", b"new", 0), 30, wait=True)
    assert [(m.key(), m.value()) for m in consume_all(broker.bootstrap, topic)] == [
        (b"k", b"from the new leader"), (b"offsets", b"new")]


def test_records_sent_while_a_commit_is_in_flight_go_in_the_next_transaction(
        broker: Broker, unique_name: str) -> None:
    """The commit runs beside the engine: what is sent meanwhile (here while the broker is
    frozen, so the commit cannot end) is held, then produced in the next transaction, in
    order, after the offsets record of the one before."""
    topic = f"{unique_name}.records"
    create_topic(broker.bootstrap, topic, 1)
    sink = TransactionalSink({"bootstrap.servers": broker.bootstrap}, f"gtidmark-{unique_name}-0")
    sink.open(30)
    committed: list[bytes] = []
    first = [b"a%d" % i for i in range(3000)]
    second = [b"b%d" % i for i in range(3000)]
    for value in first:
        sink.send(topic, b"k", value)
    broker.pause()
    try:
        sink.commit((topic, b"offsets", b"a", 0), 30, lambda: committed.append(b"a"))
        for value in second:
            sink.send(topic, b"k", value)
        sink.poll(0)
        assert sink.committing and not committed
        assert sink.in_transaction == len(second)
    finally:
        broker.resume()
    sink.commit((topic, b"offsets", b"b", 0), 30, lambda: committed.append(b"b"), wait=True)
    assert committed == [b"a", b"b"] and not sink.committing
    got = [m.value() for m in consume_all(broker.bootstrap, topic)]
    assert got == [*first, b"a", *second, b"b"]


def test_a_frozen_leader_and_a_broker_restart_leave_every_change_exactly_once(
        mariadb: MariaDbPair, services_dir: Path, unique_name: str,
        group_factory: Any) -> None:
    kafka = Broker(services_dir / unique_name)
    kafka.start()
    try:
        db = unique_name
        # The initial snapshot of the 5,000 rows runs through the freeze and the restart too.
        doc, group, first = leading_group(mariadb, kafka, group_factory, db, 5_000, **{
            "exactly.once.support": "required", "snapshot.mode": "initial",
            "incremental.snapshot.chunk.size": "256"})
        writer = Writer(mariadb, db, "big", 5_000, seed=17, per_second=200)
        writer.start()
        try:
            time.sleep(2)
            zombie = group.by_pid(first["writer"]["pid"])
            frozen = freeze(zombie)  # records sent, its transaction open
            group.wait_epoch_above(kafka, first["epoch"])
            thaw_until_stepped_down(zombie, frozen)
            time.sleep(2)
            kafka.stop()  # a broker restart under the new leader's open transaction
            kafka.start_again()
            time.sleep(3)
        finally:
            writes = writer.stop()
        wait_until(lambda: f"snapshot of {db}.big complete" in group.logs(), 120,
                   "the initial snapshot to complete on either instance")
        wait_covered(mariadb, kafka, doc)
        compare(mariadb, kafka, db, "big", ["id"])
        changes, repeated = duplicates(kafka.bootstrap, f"{db}.{db}.big")
        assert writes > 500 and changes >= writes
        assert repeated == 0
    finally:
        kafka.stop()
