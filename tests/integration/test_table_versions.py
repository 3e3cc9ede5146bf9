"""A table's new version after DDL is read from its table map whole, not matched to an
older one by column names and types alone.

The reader shares one table model between table maps that describe the same table the same
way. Before, "the same way" was column names, type codes and signedness: after a new
primary key the records kept the old key. ENUM members, DECIMAL precision and nullability
changed in the same ALTER are checked too (values and schemas come from the current map
and the streamed DDL; the model must not undo them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.connector_tools import SourcePair, connector_document, streaming_connector
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.services import wait_for


def _records(broker: Broker, topic: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(json.loads(m.key()), json.loads(m.value())) for m in consume_all(broker.bootstrap, topic)
            if m.value() is not None]


def _field(schema: dict[str, Any], part: str, name: str) -> dict[str, Any]:
    block = next(f for f in schema["fields"] if f["field"] == part)
    return next(f for f in block["fields"] if f["field"] == name)


def test_records_after_ddl_follow_the_new_key_enum_members_precision_and_nullability(
        source: SourcePair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    p = source.primary
    p.execute(f"CREATE DATABASE {db}")
    p.execute(f"CREATE TABLE {db}.t (a INT NOT NULL, b INT NOT NULL, e ENUM('x','y') NOT NULL, "
              "d DECIMAL(6,2) NOT NULL, PRIMARY KEY (a))")
    topic = f"{db}.{db}.t"
    with streaming_connector(connector_document(source, broker, db), tmp_path):
        p.execute(f"INSERT INTO {db}.t VALUES (1, 1, 'y', 1.5)")
        p.execute(f"ALTER TABLE {db}.t DROP PRIMARY KEY, ADD PRIMARY KEY (a, b), "
                  "MODIFY e ENUM('x','z','y') NOT NULL, MODIFY d DECIMAL(8,2) NULL")
        p.execute(f"INSERT INTO {db}.t VALUES (1, 2, 'z', 123456.75)")
        records = wait_for(lambda: (r := _records(broker, topic)) and len(r) >= 2 and r, 60,
                           "both inserts in the topic", 0.5)
    (key_before, _), (key_after, value_after) = records
    assert key_before["payload"] == {"a": 1}
    assert key_after["payload"] == {"a": 1, "b": 2}  # before: {"a": 1}
    after = value_after["payload"]["after"]
    assert after["e"] == "z"
    enum = _field(value_after["schema"], "after", "e")
    assert enum["parameters"]["allowed"] == "x,z,y"
    decimal = _field(value_after["schema"], "after", "d")
    assert decimal["parameters"]["connect.decimal.precision"] == "8"
    assert decimal["optional"] is True


def test_create_table_select_gives_its_schema_change_then_its_rows(
        source: SourcePair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """Under ROW, CREATE TABLE ... SELECT is one transaction: the CREATE as a statement, then
    the rows as row events. Debezium writes the schema change and then the rows."""
    db = unique_name
    p = source.primary
    p.execute(f"CREATE DATABASE {db}")
    p.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(10))")
    p.execute(f"INSERT INTO {db}.t VALUES (1, 'a'), (2, 'b')")
    with streaming_connector(connector_document(source, broker, db), tmp_path):
        p.execute(f"CREATE TABLE {db}.copy (PRIMARY KEY (id)) SELECT id, v FROM {db}.t")
        rows = wait_for(lambda: (r := _records(broker, f"{db}.{db}.copy")) and len(r) >= 2 and r,
                        60, "the copied rows in their topic", 0.5)
        changes = [json.loads(m.value())["payload"] for m in consume_all(broker.bootstrap, db)]
    assert [row[0]["payload"]["id"] for row in rows] == [1, 2]
    creates = [c for c in changes if "copy" in c["ddl"]]
    assert len(creates) == 1, changes
    assert creates[0]["ddl"].startswith("CREATE TABLE"), creates[0]
    assert creates[0]["tableChanges"][0]["table"]["primaryKeyColumnNames"] == ["id"]
