"""The Debezium runners themselves: records with topic, key, value and headers; a clean stop;
the config Connect gets."""

from __future__ import annotations

from pathlib import Path

from tests.connect_services import ConnectWorker, DebeziumOnConnect
from tests.debezium_runner import DebeziumProcess, mysql_properties
from tests.services import MariaDbPair


def test_runner_writes_records_and_stops_cleanly(dbz_mariadb: MariaDbPair, tmp_path: Path) -> None:
    db = "dbzrunner"
    dbz = DebeziumProcess(mysql_properties(dbz_mariadb, db, tmp_path,
                                           **{"database.include.list": db}), tmp_path)
    dbz.start()
    try:
        p = dbz_mariadb.primary
        p.execute(f"CREATE DATABASE {db}")
        p.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(10))")
        p.execute(f"INSERT INTO {db}.t VALUES (1, 'a')")
        p.execute(f"UPDATE {db}.t SET id = 2 WHERE id = 1")
        records = dbz.wait_records(lambda rs: sum(r["topic"] == f"{db}.{db}.t" for r in rs) >= 4)
    finally:
        assert dbz.stop() == 0
    rows = [r for r in records if r["topic"] == f"{db}.{db}.t"]
    assert [r["value"]["payload"]["op"] if r["value"] else None for r in rows] == \
        ["c", "d", None, "c"]
    assert rows[0]["key"] == {"schema": rows[0]["key"]["schema"], "payload": {"id": 1}}
    assert rows[3]["headers"]["__debezium.oldkey"]["payload"] == {"id": 1}
    assert "debezium engine stopped" in dbz.log_path.read_text()


def test_connect_config_keeps_connector_converters_only(dbz_mariadb: MariaDbPair,
                                                        tmp_path: Path) -> None:
    """The engine's `*.converter.schemas.enable` are the worker's business on Connect and
    dropped, unless the connector names its own converter (Connect's override)."""
    worker = ConnectWorker(tmp_path, "127.0.0.1:9092")
    plain = DebeziumOnConnect(worker, mysql_properties(dbz_mariadb, "cfg", tmp_path),
                              lambda _: True)
    assert not [k for k in plain.config if "converter" in k]
    converter = "org.apache.kafka.connect.json.JsonConverter"
    own = DebeziumOnConnect(worker, mysql_properties(
        dbz_mariadb, "cfg", tmp_path, **{"key.converter": converter,
                                         "key.converter.schemas.enable": "false"}),
        lambda _: True)
    assert {k: v for k, v in own.config.items() if "converter" in k} == {
        "key.converter": converter, "key.converter.schemas.enable": "false"}
