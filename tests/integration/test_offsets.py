"""The offsets topic as real deployments have it: several partitions, Kafka Connect's
own topic, a non-compacted topic, writes that fail or stall."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from connector.engine import Engine
from connector.gtid import MariaDbGtidPos
from connector.kafka.partitioner import key_partition
from connector.kafka.sink import Sink
from connector.kafka.topics import TopicAdmin
from connector.leadership.lease import Instance
from connector.offsets.store import OffsetStore, OffsetsWriteFailed, read_committed
from connector.offsets.value import ConnectorOffsets
from connector.settings.parse import parse_config
from connector.snapshot.progress import TableProgress
from connector.snapshot.state import SnapshotState
from tests.connector_tools import (
    ConnectorProcess,
    connector_document,
    rebuild,
    source_rows,
    streaming_connector,
)
from tests.integration.test_streaming import as_int64
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, create_topic
from tests.services import MariaDbPair, wait_for
from tests.workload import TABLES, synced_workload

CONNECT_DEFAULT_PARTITIONS = 25  # Kafka Connect's offset.storage.partitions default


def committed_gtids(broker: Broker, doc: dict[str, Any], topic: str) -> MariaDbGtidPos | None:
    """The newest committed record for the connector's key in any partition (test-side)."""
    key = json.dumps([doc["name"], {"server": doc["config"]["topic.prefix"]}],
                     separators=(",", ":")).encode()
    ours = [m for m in consume_all(broker.bootstrap, topic) if m.key() == key and m.value()]
    if not ours:
        return None
    newest = max(ours, key=lambda m: (m.timestamp()[1], m.offset()))
    return MariaDbGtidPos.parse(json.loads(newest.value())["gtids"])


def wait_committed(mariadb: MariaDbPair, broker: Broker, doc: dict[str, Any],
                   topic: str) -> None:
    target = MariaDbGtidPos.parse(mariadb.wait_synced())

    def covered() -> bool:
        found = committed_gtids(broker, doc, topic)
        return found is not None and found.covers(target)

    wait_for(covered, 240, f"committed offsets in {topic} to cover {target}", interval=0.5)


def rows_lost(mariadb: MariaDbPair, broker: Broker, db: str) -> int:
    """Rows of the primary missing from (or different in) the tables rebuilt from topics."""
    lost = 0
    for table, (_, key) in TABLES.items():
        rebuilt, _ = rebuild(broker.bootstrap, f"{db}.{db}.{table}")
        for k, row in source_rows(mariadb, db, table, key).items():
            if table == "orders":  # BIGINT UNSIGNED arrives as int64 (Debezium's default)
                row["flags"] = as_int64(row["flags"])
            got = rebuilt.get(k)
            if got is None or any(got.get(c) != v for c, v in row.items()):
                lost += 1
    return lost


@pytest.mark.parametrize("layout", ["three-partitions", "connect-offsets-topic"])
def test_restart_after_changes_while_down_loses_nothing(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        layout: str) -> None:
    db = unique_name
    if layout == "three-partitions":
        settings = {"offset.storage.partitions": "3"}
        topic = f"{db}-offsets"
    else:  # Kafka Connect's own offsets topic, created before the connector by Connect
        topic = f"{db}-connect-offsets"
        create_topic(broker.bootstrap, topic, CONNECT_DEFAULT_PARTITIONS,
                     config={"cleanup.policy": "compact"})
        settings = {"offset.storage.topic": topic}
    workload = synced_workload(mariadb, db, seed=31)
    doc = connector_document(mariadb, broker, db, **settings)
    conn = ConnectorProcess(doc, tmp_path)
    conn.start()
    try:
        conn.wait_log("binlog stream open")
        workload.run(300, add_column_at=None)
        wait_committed(mariadb, broker, doc, topic)
        assert conn.stop() == 0
        workload.run(600, add_column_at=None)  # while the connector is down
        conn.start()
        conn.wait_log("binlog stream open")
        workload.run(300, add_column_at=None)
        workload.close()
        wait_committed(mariadb, broker, doc, topic)
        assert conn.stop() == 0
    finally:
        conn.ensure_stopped()
    assert "resuming from committed offsets" in conn.log()
    assert rows_lost(mariadb, broker, db) == 0
    status = subprocess.run([sys.executable, "-m", "connector.cli", "status", "--config",
                             str(conn.config_path)], capture_output=True, text=True,
                            timeout=60, check=False)
    assert status.returncode == 0 and "streaming position: gtids=0-1-" in status.stdout


def test_a_start_without_ha_after_a_leased_one_does_not_rewind(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """Records of the leased start carry epoch 1; the starts with ha.enabled=false that
    follow must win on load, or every restart rewinds to the leased start's position."""
    db = unique_name
    mariadb.primary.execute(f"CREATE DATABASE {db}")
    mariadb.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY)")
    mariadb.wait_synced()
    for name in ("leased", "alone2", "alone3"):
        (tmp_path / name).mkdir()
    leased = connector_document(mariadb, broker, db)
    with streaming_connector(leased, tmp_path / "leased") as conn:
        mariadb.primary.execute(f"INSERT INTO {db}.t VALUES (1)")
        wait_committed(mariadb, broker, leased, f"{db}-offsets")
        assert conn.stop() == 0
    alone = connector_document(mariadb, broker, db, ha__enabled="false")
    for first in (2, 3):
        with streaming_connector(alone, tmp_path / f"alone{first}") as conn:
            mariadb.primary.execute(f"INSERT INTO {db}.t VALUES ({first})")
            wait_committed(mariadb, broker, alone, f"{db}-offsets")
            assert conn.stop() == 0
    creates = [json.loads(m.value())["payload"]["after"]["id"]
               for m in consume_all(broker.bootstrap, f"{db}.{db}.t") if m.value() is not None]
    assert creates == [1, 2, 3]  # no restart went back to an older position


def test_offsets_go_to_the_java_partitioners_partition(broker: Broker, unique_name: str) -> None:
    """Our murmur2 partition is the one librdkafka's Java-compatible partitioner picks."""
    topic = f"{unique_name}-keys"
    create_topic(broker.bootstrap, topic, CONNECT_DEFAULT_PARTITIONS)
    keys = [json.dumps([f"conn-{i}", {"server": f"p{i * 7}"}]).encode() for i in range(200)]
    producer = Producer({"bootstrap.servers": broker.bootstrap, "partitioner": "murmur2"})
    for key in keys:
        producer.produce(topic, b"x", key)
    assert producer.flush(30) == 0
    got = {m.key(): m.partition() for m in consume_all(broker.bootstrap, topic)}
    assert got == {k: key_partition(k, CONNECT_DEFAULT_PARTITIONS) for k in keys}
    assert len(set(got.values())) == CONNECT_DEFAULT_PARTITIONS


def test_the_keys_own_partition_wins_over_a_later_record_elsewhere(
        mariadb: MariaDbPair, broker: Broker, unique_name: str) -> None:
    """A record on another partition (from before a partition count change) is older than
    any in the key's own partition, whatever its timestamp says."""
    doc = connector_document(mariadb, broker, unique_name)
    config = parse_config(doc)
    create_topic(broker.bootstrap, config.offsets_topic, CONNECT_DEFAULT_PARTITIONS,
                 config={"cleanup.policy": "compact"})
    store = OffsetStore(config)
    store.open(TopicAdmin(config.producer_settings()))
    stale = (store.partition + 1) % CONNECT_DEFAULT_PARTITIONS
    store.seed(ConnectorOffsets(gtids="0-1-9", signal_offset=3))
    assert store.flush(30)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce(config.offsets_topic, ConnectorOffsets(gtids="0-1-5").to_bytes(),
                     json.dumps([config.name, {"server": config.topic_prefix}],
                                separators=(",", ":")).encode(), partition=stale,
                     timestamp=int(time.time() * 1000) + 3_600_000)  # a clock an hour ahead
    assert producer.flush(30) == 0
    assert store.load() == (ConnectorOffsets(gtids="0-1-9", signal_offset=3), 0)


def test_non_compacted_offsets_topic_exits_2(mariadb: MariaDbPair, broker: Broker,
                                             unique_name: str, tmp_path: Path) -> None:
    topic = f"{unique_name}-offsets"
    create_topic(broker.bootstrap, topic, 1)  # cleanup.policy defaults to delete
    doc = connector_document(mariadb, broker, unique_name)
    conn = ConnectorProcess(doc, tmp_path)
    conn.start()
    assert conn.proc is not None
    assert conn.proc.wait(60) == 2
    errors = [line for line in conn.log().splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert "offset.storage.topic" in errors[0] and "cleanup.policy=compact" in errors[0]


def test_rejected_offsets_write_stops_at_once(mariadb: MariaDbPair, broker: Broker,
                                              unique_name: str) -> None:
    """An offsets record Kafka refuses (over message.max.bytes) is fatal, not a crash."""
    config = parse_config(connector_document(mariadb, broker, unique_name))
    store = OffsetStore(config)
    store.open(TopicAdmin(config.producer_settings()))
    sink = Sink(config.producer_settings())
    huge = SnapshotState(id="x", tables=[TableProgress(table="a.b", condition="x" * 2_000_000)])
    store.checkpoint(0, ConnectorOffsets(gtids="0-1-1", snapshot=huge))
    with pytest.raises(OffsetsWriteFailed, match=f"offsets write to {config.offsets_topic}"):
        store.commit_acked(sink)


def test_stalled_offsets_commit_is_reported_while_running(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    workload = synced_workload(mariadb, db, seed=41)
    # Without HA delivery never times out, so the stall lasts as long as the outage; with
    # HA it ends in a step-down after half the session (test_ha covers that).
    doc = connector_document(mariadb, broker, db, ha__enabled="false")
    with streaming_connector(doc, tmp_path) as conn:
        workload.run(100, add_column_at=None)  # every table's topic exists before the outage
        wait_committed(mariadb, broker, doc, f"{db}-offsets")
        broker.pause()
        try:
            workload.run(200, add_column_at=None)
            conn.wait_log("offsets not committed to", timeout=60)
        finally:
            broker.resume()
        conn.wait_log("offsets committed to", timeout=60,
                      after=conn.log().index("offsets not committed to"))
        workload.close()
        wait_committed(mariadb, broker, doc, f"{db}-offsets")
        assert conn.stop() == 0
    assert rows_lost(mariadb, broker, db) == 0


def test_a_start_that_took_another_writers_epoch_does_not_stream(
        mariadb: MariaDbPair, broker: Broker, unique_name: str,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Two starts read the topic before either start record landed and both took epoch 3:
    the one whose record landed second stops before streaming; the first keeps it."""
    config = parse_config(connector_document(mariadb, broker, unique_name,
                                             ha__enabled="false"))
    store = OffsetStore(config)
    store.open(TopicAdmin(config.producer_settings()))
    first = ConnectorOffsets(gtids=mariadb.wait_synced(), epoch=3,
                             writer=Instance("other-host", 4242, 1.0))
    store.seed(first)
    assert store.flush(30)
    read_before_it_landed = OffsetStore.load

    def stale(self: OffsetStore) -> tuple[ConnectorOffsets | None, int]:
        value, _ = read_before_it_landed(self)
        return value, 2

    monkeypatch.setattr(OffsetStore, "load", stale)
    engine = Engine(config)
    outcome: list[int] = []
    runner = threading.Thread(target=lambda: outcome.append(engine.run()), daemon=True)
    runner.start()
    runner.join(90)
    if runner.is_alive():
        engine.stopping.set()
        runner.join(60)
        pytest.fail("the second writer of epoch 3 streamed")
    assert outcome == [1]
    assert "fenced: the offsets carry epoch 3 of writer" in caplog.text
    assert read_committed(config) == first
