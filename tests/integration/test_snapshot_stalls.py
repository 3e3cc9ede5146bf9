"""A snapshot session gone half-open (a failover: no bytes, no close) holds neither the stream
nor, past the read timeout, the snapshot."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.connector_tools import ConnectorProcess
from tests.integration.test_snapshot import signal, start
from tests.integration.test_snapshot_keys import reads
from tests.kafka_services import Broker
from tests.kafka_tools import decode_json
from tests.services import MariaDbPair
from tests.tcp_proxy import TcpProxy

pytestmark = pytest.mark.integration

READ_TIMEOUT = "3"  # GTIDMARK_SNAPSHOT_READ_TIMEOUT here; 60 s by default
CHUNK_DELAY_MS = 3000  # between the first table's end and the second table's reads


class Tail:
    """The change topic of one table, read as it grows: when did row `id` arrive?"""

    def __init__(self, broker: Broker, topic: str) -> None:
        self._consumer = Consumer({"bootstrap.servers": broker.bootstrap,
                                   "group.id": "tests-tail", "enable.auto.commit": False,
                                   "fetch.wait.max.ms": 10})
        self._consumer.assign([TopicPartition(topic, 0, 0)])
        self._seen: set[int] = set()

    def wait(self, row_id: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while row_id not in self._seen and time.monotonic() < deadline:
            msg = self._consumer.poll(0.05)
            if msg is not None and msg.error() is None and msg.value() is not None:
                after = decode_json(msg.value())["payload"]["after"]
                if after is not None:
                    self._seen.add(after["id"])
        return row_id in self._seen

    def close(self) -> None:
        self._consumer.close()


def stream_latency(mariadb: MariaDbPair, db: str, tail: Tail, row_id: int) -> float:
    """Seconds from a row's commit on the primary to its event in Kafka (inf: none in 10 s)."""
    began = time.monotonic()
    mariadb.primary.execute(f"INSERT INTO {db}.live VALUES (%s, 0)", (row_id,))
    return time.monotonic() - began if tail.wait(row_id, 10) else float("inf")


def test_a_frozen_snapshot_session_holds_neither_the_stream_nor_the_snapshot(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess], monkeypatch: pytest.MonkeyPatch) -> None:
    """Both snapshot sessions freeze as the first table ends; the second table's columns and
    largest key are read on one of them. The stream goes on meanwhile (the engine thread
    read them before, for up to the 600 s read timeout), and the snapshot notices the dead
    session after its read timeout, says so in one line and reads on a new one."""
    db = unique_name
    p = mariadb.primary
    p.execute(f"CREATE DATABASE {db}")
    for table in ("first", "second", "live"):
        p.execute(f"CREATE TABLE {db}.{table} (id INT PRIMARY KEY, v INT)")
    for table in ("first", "second"):
        p.execute(f"INSERT INTO {db}.{table} VALUES (1, 1), (2, 2), (3, 3)")
    mariadb.wait_synced()
    monkeypatch.setenv("GTIDMARK_SNAPSHOT_READ_TIMEOUT", READ_TIMEOUT)
    proxy = TcpProxy(mariadb.replica.port)
    tail: Tail | None = None
    try:
        proc = start(mariadb, broker, db, tmp_path, connector, database__port=str(proxy.port),
                     incremental__snapshot__chunk__delay__ms=str(CHUNK_DELAY_MS))
        tail = Tail(broker, f"{db}.{db}.live")
        # The stream, and the catalog session its events need, open before the mark.
        assert stream_latency(mariadb, db, tail, 0) < 10
        mark = proxy.accepted()
        signal(proc, "execute-snapshot", tables=[f"{db}.first", f"{db}.second"])
        proc.wait_log(f"snapshot of {db}.first complete")
        assert proxy.freeze(since=mark) >= 2  # the signals' catalog and the chunk reader
        frozen_at = time.monotonic()
        lags: list[float] = []
        # Past the chunk delay, the read timeout and the 1 s retry.
        while time.monotonic() - frozen_at < CHUNK_DELAY_MS / 1000 + int(READ_TIMEOUT) + 2:
            lags.append(stream_latency(mariadb, db, tail, len(lags) + 1))
            if lags[-1] == float("inf"):
                break
            time.sleep(0.2)
        assert max(lags) < 5.0, f"stream latency while the snapshot session is frozen: {lags}"
        proc.wait_log(f"snapshot of {db}.second complete", timeout=30)
    finally:
        if tail is not None:
            tail.close()
        proxy.close()
    lost = [line for line in proc.log().splitlines() if "error 2013" in line]
    assert len(lost) == 1, lost
    assert f"snapshot chunk of {db}.second failed" in lost[0]
    assert sorted(r["id"] for r in reads(broker, f"{db}.{db}.second")) == [1, 2, 3]
