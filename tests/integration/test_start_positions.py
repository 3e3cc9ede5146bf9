"""Where a first start streams from on replicas as they are provisioned: binlogs purged
(a replica built by clone or backup has a history it never binlogged)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.connector_tools import ConnectorProcess, SourcePair, connector_document
from tests.integration.test_streaming import wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all


@pytest.fixture
def purged_replica(source: SourcePair) -> Iterator[SourcePair]:
    """A replica of the session's primary of its own, whose binlogs the test purges."""
    pair = source.another_replica(f"purged-{source.flavour}", server_id=21)
    yield pair
    pair.replica.stop()


def test_never_on_a_replica_with_purged_binlogs_streams_what_it_has(
        purged_replica: SourcePair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    pair, db = purged_replica, unique_name
    pair.primary.execute(f"CREATE DATABASE {db}")
    pair.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(10))")
    pair.primary.execute(f"INSERT INTO {db}.t VALUES (1, 'purged')")
    pair.wait_synced()
    pair.replica.purge_older_binlogs()
    pair.primary.execute(f"INSERT INTO {db}.t VALUES (2, 'kept')")
    doc = connector_document(pair, broker, db, snapshot__mode="never")
    proc = ConnectorProcess(doc, tmp_path)
    proc.start()
    try:
        proc.wait_log("binlog stream open")
        pair.primary.execute(f"INSERT INTO {db}.t VALUES (3, 'live')")
        wait_caught_up(pair, broker, doc, timeout=60)
        assert proc.stop() == 0
    finally:
        proc.ensure_stopped()
    ids = [json.loads(m.value())["payload"]["after"]["id"]
           for m in consume_all(broker.bootstrap, f"{db}.{db}.t") if m.value() is not None]
    assert ids == [2, 3]  # everything the replica still has, in order; row 1 is purged
    assert "streaming from the oldest binlog" in proc.log()
