"""The status topic's records against Kafka Connect's own (the oracle): Debezium on the test
Connect 4 worker, RUNNING then stopped, its worker's status topic read raw."""

from __future__ import annotations

from pathlib import Path

from connector.kafka.status_topic import StatusRecord, connector_key, task_key
from tests.connect_services import ConnectWorker
from tests.integration.test_debezium_migration import debezium_on_worker
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.services import MariaDbPair, wait_for


def latest(broker: Broker, topic: str, keys: tuple[str, str]) -> dict[str, bytes | None]:
    """The last raw value of each of `keys` in the status topic (None: a tombstone)."""
    out: dict[str, bytes | None] = {}
    for msg in consume_all(broker.bootstrap, topic):
        key = msg.key().decode()
        if key in keys:
            out[key] = msg.value()
    return out


def states(broker: Broker, topic: str, keys: tuple[str, str],
           wanted: tuple[str, str | None]) -> dict[str, bytes | None] | None:
    """The records when the connector's and task's states are `wanted` (None: a tombstone)."""
    found = latest(broker, topic, keys)
    shown = tuple(None if (raw := found.get(k)) is None else
                  (r.state if (r := StatusRecord.decode(raw)) is not None else "?")
                  for k in keys)
    return found if all(k in found for k in keys) and shown == wanted else None


def test_connects_status_records_are_byte_for_byte_the_ones_written_here(
        dbz_mariadb: MariaDbPair, broker: Broker, connect_worker: ConnectWorker,
        unique_name: str, tmp_path: Path) -> None:
    pair, db = dbz_mariadb, unique_name
    pair.primary.execute(f"CREATE DATABASE {db}")
    pair.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY)")
    pair.wait_synced()
    dbz = debezium_on_worker(connect_worker, pair, {"name": f"{db}-connector", "config": {
        "topic.prefix": db, "database.include.list": db}}, tmp_path / "dbz")
    name, topic = dbz.name, f"{connect_worker.group}-status"
    keys = (connector_key(name), task_key(name))
    dbz.start()
    try:
        running = wait_for(lambda: states(broker, topic, keys, ("RUNNING", "RUNNING")), 60,
                           "Connect's RUNNING records", interval=0.5)
        for key in keys:
            raw = running[key]
            assert raw is not None
            record = StatusRecord.decode(raw)
            assert record is not None and record.state == "RUNNING" and record.trace is None
            assert record.encode() == raw  # the same bytes: Connect's tools read ours
        connect_worker.stop_connector(name)
        # STOPPED, and the task's record removed (a tombstone), as the recorder writes them.
        wait_for(lambda: states(broker, topic, keys, ("STOPPED", None)), 60,
                 "Connect's STOPPED records", interval=0.5)
    finally:
        connect_worker.delete(name)
