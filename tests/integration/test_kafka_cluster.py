"""A three-broker Apache Kafka cluster (replication factor 3, min.insync.replicas=2,
acks=all) that loses a broker to SIGKILL while changes stream and a snapshot runs: the
broker leading the change topic's partition, or the group coordinator of the HA lease.
Nothing is lost, the offsets survive, and the time until offsets move again is printed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient

from connector.settings.parse import parse_config
from tests.connector_tools import ConnectorProcess, wait_until
from tests.integration.test_snapshot import Writer, compare, make_table, proc_doc, signal, start
from tests.integration.test_streaming import committed_offsets, wait_caught_up
from tests.kafka_services import Broker, KafkaNode
from tests.services import MariaDbPair, ServiceError


@pytest.fixture(scope="module")
def cluster(services_dir: Path) -> Iterator[Broker]:
    brokers = Broker(services_dir / "cluster", size=3)
    try:
        brokers.start()
    except (ServiceError, OSError) as exc:
        brokers.stop()
        pytest.fail(f"a three-broker Apache Kafka cluster could not start: {exc}",
                    pytrace=False)
    yield brokers
    brokers.stop()


def node(cluster: Broker, node_id: int) -> KafkaNode:
    return next(n for n in cluster.nodes if n.node_id == node_id)


def partition_leader(cluster: Broker, topic: str) -> int:
    meta = AdminClient({"bootstrap.servers": cluster.bootstrap}).list_topics(topic, timeout=10)
    partition = meta.topics[topic].partitions[0]
    assert len(partition.replicas) == 3, partition.replicas
    return int(partition.leader)


def coordinator(cluster: Broker, group: str) -> int:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    return int(admin.describe_consumer_groups([group])[group].result(10).coordinator.id)


@pytest.mark.parametrize("victim", ["change topic's partition leader", "lease's coordinator"])
def test_a_broker_killed_while_streaming_and_snapshotting_loses_nothing(
        mariadb: MariaDbPair, cluster: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess], victim: str) -> None:
    db = unique_name
    make_table(mariadb, db, 20_000)
    proc = start(mariadb, cluster, db, tmp_path, connector,
                 **{"incremental.snapshot.chunk.size": "512"})
    group = f"{parse_config(proc_doc(proc)).name}-leader"
    writer = Writer(mariadb, db, "big", 20_000, seed=13, per_second=200)
    writer.start()
    try:
        signal(proc, "execute-snapshot", tables=[f"{db}.big"])
        proc.wait_log(f"snapshot of {db}.big", timeout=60)
        topic = f"{db}.{db}.big"
        wait_until(lambda: partition_leader(cluster, topic) > 0, 30, f"{topic}'s leader")
        lost = partition_leader(cluster, topic) if victim.startswith("change") \
            else coordinator(cluster, group)
        before: dict[str, Any] | None = committed_offsets(cluster, proc_doc(proc))
        killed_at = time.monotonic()
        node(cluster, lost).kill()
        wait_until(lambda: committed_offsets(cluster, proc_doc(proc)) != before, 120,
                   "the committed offsets to move after the kill")
        recovery = time.monotonic() - killed_at
        if victim.startswith("lease"):  # the group lives on with another coordinator
            assert coordinator(cluster, group) != lost
        print(f"\n{victim} (node {lost}) killed: offsets committed again after "
              f"{recovery:.1f}s", flush=True)
        node(cluster, lost).start()
        cluster.wait_ready()
        proc.wait_log(f"snapshot of {db}.big complete", timeout=300)
    finally:
        writes = writer.stop()
    wait_caught_up(mariadb, cluster, proc_doc(proc))
    envelopes = compare(mariadb, cluster, db, "big", ["id"])
    assert writes > 100
    assert sum(1 for e in envelopes if e["op"] == "r") > 10_000
