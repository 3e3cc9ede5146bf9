"""TRUNCATE TABLE as Debezium 3.6 sends it: an op=t record where skipped.operations lets it.

The conformance run (tests/conformance/, skipped.operations=none) compares the record with
Debezium's on both flavours; these check what it does not: the columns of a table no row of
which streamed since its last DDL, the default (no record), unwrap (dropped), Avro.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import fastavro
import pytest

from connector.events import EventEncoder
from connector.events.converters import AVRO_CONVERTER
from tests import connect_oracle
from tests.connector_tools import SourcePair, wait_until
from tests.integration.test_resilience import connector_on
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.services import MariaDbPair
from tests.unit.test_envelope import SOURCE, config
from tests.unit.test_null_defaults import TABLE

UNWRAP = {"transforms": "unwrap",
          "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState"}


def _records(broker: Broker, topic: str, count: int) -> list[Any]:
    """The first `count` records of `topic` as (key, value, headers), JSON parsed."""
    def read() -> list[Any] | None:
        msgs = consume_all(broker.bootstrap, topic)
        return [(json.loads(m.key()) if m.key() else None,
                 json.loads(m.value()) if m.value() else None, m.headers())
                for m in msgs] if len(msgs) >= count else None
    out: list[Any] = wait_until(read, 60, f"{count} records on {topic}")
    return out


def _ops(records: list[Any]) -> list[str]:
    return [v["payload"]["op"] for _, v, _ in records]


def _run(pair: SourcePair, db: str) -> None:
    conn = pair.primary.root(db)
    with conn.cursor() as cur:
        for statement in ("INSERT INTO t VALUES (1, 'a'), (2, 'b')", "TRUNCATE TABLE t",
                          "INSERT INTO t VALUES (3, 'c')",
                          "CREATE TABLE u (id INT PRIMARY KEY)", "INSERT INTO u VALUES (1)",
                          "ALTER TABLE u ADD COLUMN w INT", "TRUNCATE TABLE u",
                          "INSERT INTO u VALUES (2, 5)"):
            cur.execute(statement)
    conn.close()


def test_truncate_is_an_op_t_record_in_stream_order(source: SourcePair, broker: Broker,
                                                    unique_name: str, tmp_path: Path) -> None:
    """skipped.operations=none: t between the rows before and after it, no key, no
    tombstone, no header; after an ALTER with no row since, the columns are the new ones."""
    with connector_on(source, broker, unique_name, tmp_path,
                      {"skipped.operations": "none"}) as (db, _, _):
        _run(source, db)
        t = _records(broker, f"{db}.{db}.t", 4)
        u = _records(broker, f"{db}.{db}.u", 3)
    assert _ops(t) == ["c", "c", "t", "c"] and _ops(u) == ["c", "t", "c"]
    key, value, headers = t[2]
    assert key is None and not headers
    payload = value["payload"]
    assert (payload["before"], payload["after"]) == (None, None)
    assert (payload["source"]["db"], payload["source"]["table"]) == (db, "t")
    assert payload["transaction"] is None
    after_fields = [f["fields"] for f in u[1][1]["schema"]["fields"] if f["field"] == "after"]
    assert [f["field"] for f in after_fields[0]] == ["id", "w"]
    assert u[1][1]["schema"] == u[2][1]["schema"]  # the schema of the rows after it


@pytest.mark.parametrize("settings", [{}, {"skipped.operations": "none", **UNWRAP}],
                         ids=["default", "unwrap"])
def test_truncate_is_not_sent_by_default_nor_through_unwrap(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        settings: dict[str, str]) -> None:
    """skipped.operations [t] skips it, as Debezium; ExtractNewRecordState drops it
    (its handleTruncateRecord); the rows around it are sent."""
    with connector_on(mariadb, broker, unique_name, tmp_path, settings) as (db, _, _):
        _run(mariadb, db)
        u = _records(broker, f"{db}.{db}.u", 2)
        t = _records(broker, f"{db}.{db}.t", 3)
    assert len(t) == 3 and len(u) == 2
    rows = [v["payload"] if "op" not in v["payload"] else v["payload"]["after"]
            for _, v, _ in t]
    assert [r["id"] for r in rows] == [1, 2, 3]


def test_truncate_in_avro_as_confluents_avro_converter() -> None:
    """The t record's value under Avro: Confluent's AvroConverter writes the same."""
    record = EventEncoder(config()).table(TABLE).value("t", None, None, SOURCE, 1)
    (answer,) = connect_oracle.check([{"kind": "avro_writes", "topic": "app.shop.enums",
                                       "json": record.decode(), "is_key": False}])
    assert "error" not in answer, answer
    registered: dict[str, str] = {}

    def lookup(subject: str, schema_json: str) -> int:
        registered[subject] = schema_json
        return 1
    avro = config(**{"key.converter": AVRO_CONVERTER, "value.converter": AVRO_CONVERTER})
    raw = EventEncoder(avro, schema_ids=lookup).table(TABLE).value("t", None, None, SOURCE, 1)
    schema = fastavro.parse_schema(json.loads(registered["app.shop.enums-value"]))
    ours = fastavro.schemaless_reader(io.BytesIO(raw[5:]), schema, None)
    assert ours == answer["avro_payload"]
    assert isinstance(ours, dict) and ours["op"] == "t" and ours["before"] is None
