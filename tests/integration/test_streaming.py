"""Streaming end to end: the real connector process, real MariaDB, real broker.

The strongest check we have: run a random workload, rebuild every table from its topic and
compare with the primary row for row.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from connector.flavours import flavour_named
from tests.connector_tools import (
    ConnectorProcess,
    SourcePair,
    connector_document,
    rebuild,
    source_rows,
    wait_until,
)
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, list_topics
from tests.workload import TABLES, Workload


def committed_offsets(broker: Broker, doc: dict[str, Any]) -> dict[str, Any] | None:
    prefix = doc["config"]["topic.prefix"]
    topic = doc["config"].get("offset.storage.topic", f"{prefix}-offsets")
    key = json.dumps([doc["name"], {"server": prefix}], separators=(",", ":")).encode()
    found = None
    if topic not in list_topics(broker.bootstrap):
        return None
    for msg in consume_all(broker.bootstrap, topic):
        if msg.key() == key and msg.value() is not None:
            found = json.loads(msg.value())
    return found


def wait_caught_up(mariadb: SourcePair, broker: Broker, doc: dict[str, Any],
                   timeout: float = 240) -> None:
    """Until the committed offsets cover everything the primary has written."""
    flavour = flavour_named(mariadb.flavour)
    target = flavour.position(mariadb.wait_synced())

    def covered() -> bool:
        offsets = committed_offsets(broker, doc)
        return offsets is not None and flavour.position(offsets["gtids"]).covers(target)

    wait_until(covered, timeout, f"committed offsets to cover {target}")


def as_int64(value: int | None) -> int | None:
    return None if value is None else value - 2**64 if value >= 2**63 else value


def assert_tables_match(mariadb: SourcePair, broker: Broker, db: str) -> int:
    total = 0
    for table, (_, key) in TABLES.items():
        rebuilt, envelopes = rebuild(broker.bootstrap, f"{db}.{db}.{table}")
        expected = source_rows(mariadb, db, table, key)
        if table == "orders":
            # BIGINT UNSIGNED maps to int64 (bigint.unsigned.handling.mode=long, Debezium's
            # default): values above 2^63-1 arrive as their two's complement.
            for row in expected.values():
                row["flags"] = as_int64(row["flags"])
        missing = expected.keys() - rebuilt.keys()
        extra = rebuilt.keys() - expected.keys()
        assert not missing and not extra, f"{table}: missing {list(missing)[:5]}, " \
            f"extra {list(extra)[:5]}"
        # A column added later is absent from older events: absent means NULL.
        wrong = [k for k in expected
                 if expected[k] != {c: rebuilt[k].get(c) for c in expected[k]}]
        assert not wrong, f"{table}: {len(wrong)} rows differ, e.g. {expected[wrong[0]]} != " \
            f"{rebuilt[wrong[0]]}"
        total += len(envelopes)
    return total


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path


def test_rebuild_from_topics_equals_primary(source: SourcePair, broker: Broker,
                                            unique_name: str, workdir: Path) -> None:
    db = unique_name
    workload = Workload(source, db, seed=11)
    workload.create()
    source.wait_synced()
    doc = connector_document(source, broker, db)
    conn = ConnectorProcess(doc, workdir)
    conn.start()
    try:
        conn.wait_log("streaming from the position at launch")
        workload.run(20_000, add_column_at=0.5)
        workload.close()
        wait_caught_up(source, broker, doc)
        events = assert_tables_match(source, broker, db)
        assert events >= 20_000
        assert conn.stop() == 0
    finally:
        conn.ensure_stopped()
    schema_changes = [json.loads(m.value()) for m in consume_all(broker.bootstrap, db)]
    ddls = [c["payload"]["ddl"] if "payload" in c else c["ddl"] for c in schema_changes]
    assert any("ADD COLUMN note" in d for d in ddls)


def test_sigkill_at_random_moments_loses_nothing(source: SourcePair, broker: Broker,
                                                 unique_name: str, workdir: Path) -> None:
    db = unique_name
    rng = random.Random(7)
    workload = Workload(source, db, seed=23)
    workload.create()
    source.wait_synced()
    doc = connector_document(source, broker, db)
    conn = ConnectorProcess(doc, workdir)
    conn.start()
    try:
        conn.wait_log("streaming from the position at launch")
        for round_ in range(3):
            deadline = time.monotonic() + rng.uniform(1.0, 4.0)
            while time.monotonic() < deadline:
                workload.step()
            conn.kill()
            workload.run(rng.randint(200, 2000), add_column_at=0.5 if round_ == 1 else None)
            conn.start()
            conn.wait_log("resuming from committed offsets")
        workload.run(3000, add_column_at=None)
        workload.close()
        wait_caught_up(source, broker, doc)
        assert_tables_match(source, broker, db)
        assert conn.log().count("resuming from committed offsets") == 3
    finally:
        conn.ensure_stopped()
