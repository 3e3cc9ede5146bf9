"""The binlog connection and the broker limits: silent stalls and oversized records."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.connector_tools import ConnectorProcess, connector_document, rebuild
from tests.integration.test_resilience import assert_same, insert
from tests.integration.test_streaming import committed_offsets, wait_caught_up
from tests.kafka_services import Broker
from tests.services import MariaDbPair, wait_for
from tests.tcp_proxy import TcpProxy

READ_TIMEOUT = "3"  # seconds without a byte (heartbeats come every second)


@pytest.fixture
def table(mariadb: MariaDbPair, unique_name: str) -> str:
    mariadb.primary.execute(f"CREATE DATABASE {unique_name}")
    mariadb.primary.execute(f"CREATE TABLE {unique_name}.t (id INT PRIMARY KEY, v LONGTEXT)")
    mariadb.wait_synced()
    return unique_name


@pytest.fixture
def proxy(mariadb: MariaDbPair) -> Iterator[TcpProxy]:
    p = TcpProxy(mariadb.replica.port)
    yield p
    p.close()


def test_half_open_binlog_connection_is_reopened(mariadb: MariaDbPair, broker: Broker,
                                                 table: str, proxy: TcpProxy, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    db = table
    monkeypatch.setenv("GTIDMARK_BINLOG_READ_TIMEOUT", READ_TIMEOUT)
    doc = connector_document(mariadb, broker, db, database__port=str(proxy.port))
    proc = ConnectorProcess(doc, tmp_path)
    proc.start()
    try:
        proc.wait_log("binlog stream open")
        insert(mariadb, db, 1, 100)
        wait_caught_up(mariadb, broker, doc)
        assert proxy.freeze() >= 1
        insert(mariadb, db, 1000, 100)
        proc.wait_log("reconnecting from GTID", timeout=60)
        insert(mariadb, db, 2000, 100)
        wait_caught_up(mariadb, broker, doc, timeout=120)
    finally:
        proc.ensure_stopped()
    lost = [line for line in proc.log().splitlines() if "binlog connection lost" in line]
    assert len(lost) == 1, lost
    assert_same(mariadb, broker, db)


def big_row(mariadb: MariaDbPair, db: str, row_id: int, size: int) -> None:
    mariadb.primary.execute(f"INSERT INTO {db}.t VALUES (%s, REPEAT('x', %s))", (row_id, size))


def ids(broker: Broker, db: str) -> list[int]:
    rebuilt, _ = rebuild(broker.bootstrap, f"{db}.{db}.t")
    return sorted(r["id"] for r in rebuilt.values())


def test_oversized_record_stops_with_one_line_or_is_skipped_on_request(
        mariadb: MariaDbPair, broker: Broker, table: str, tmp_path: Path) -> None:
    db = table
    doc: dict[str, Any] = connector_document(mariadb, broker, db,
                                             producer__message__max__bytes="200000")
    proc = ConnectorProcess(doc, tmp_path)
    proc.start()
    try:
        proc.wait_log("binlog stream open")
        big_row(mariadb, db, 1, 100)
        big_row(mariadb, db, 2, 300_000)
        big_row(mariadb, db, 3, 100)
        mariadb.wait_synced()
        assert proc.proc is not None
        wait_for(lambda: proc.proc is not None and proc.proc.poll() is not None, 60,
                 "the connector to stop at the oversized record")
        assert proc.proc.returncode == 1
        # Every restart stops at the same record: the position never passed it.
        proc.start()
        wait_for(lambda: proc.proc is not None and proc.proc.poll() is not None, 60,
                 "the connector to stop again")
    finally:
        proc.ensure_stopped()
    lines = [line for line in proc.log().splitlines() if "over producer.message.max.bytes" in line]
    assert len(lines) == 2
    assert f'record for {db}.{db}.t key {{"id":2}} is 30' in lines[0]
    assert "event.processing.failure.handling.mode=warn" in lines[0]
    assert ids(broker, db) == [1]
    doc["config"]["event.processing.failure.handling.mode"] = "warn"
    proc.config_path.write_text(json.dumps(doc))
    proc.start()
    try:
        proc.wait_log("skipped: record for")
        big_row(mariadb, db, 4, 100)
        wait_caught_up(mariadb, broker, doc)
    finally:
        proc.ensure_stopped()
    assert ids(broker, db) == [1, 3, 4]
    assert committed_offsets(broker, doc) is not None
