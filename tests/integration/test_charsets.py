"""Column charsets as the server reads them: every latin1 byte streams and snapshots as SELECTed."""

from __future__ import annotations

import json
from pathlib import Path

from connector.settings.parse import parse_config
from signals.send import build_signal, send_signal
from tests.connector_tools import ConnectorProcess, connector_document, rebuild, source_rows
from tests.integration.test_streaming import wait_caught_up
from tests.kafka_services import Broker
from tests.services import MariaDbPair

EVERY_BYTE = "X'" + bytes(range(1, 256)).hex() + "'"
CP1252_UNDEFINED = "X'818D8F909D'"  # Python's cp1252 has no character for these five


def test_every_latin1_byte_streams_and_snapshots_as_the_server_selects_it(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    mariadb.primary.execute(f"CREATE DATABASE {db}")
    mariadb.primary.execute(
        f"CREATE TABLE {db}.l1 (id INT PRIMARY KEY, c CHAR(10) CHARACTER SET latin1, "
        "v VARCHAR(300) CHARACTER SET latin1, t TEXT CHARACTER SET latin1, n INT)")
    mariadb.wait_synced()
    doc = connector_document(mariadb, broker, db)
    proc = ConnectorProcess(doc, tmp_path)
    proc.start()
    try:
        proc.wait_log("binlog stream open")
        mariadb.primary.execute(
            f"INSERT INTO {db}.l1 VALUES (1, {CP1252_UNDEFINED}, {EVERY_BYTE}, {EVERY_BYTE}, 0),"
            " (2, 'café', 'ü', 'plain', 0)")
        mariadb.primary.execute(f"UPDATE {db}.l1 SET c = X'9D90', n = 1 WHERE id = 2")
        wait_caught_up(mariadb, broker, doc)
        send_signal(parse_config(doc), build_signal("execute-snapshot", tables=[f"{db}.l1"]))
        proc.wait_log(f"snapshot of {db}.l1 complete")
        wait_caught_up(mariadb, broker, doc)
        assert proc.stop() == 0
    finally:
        proc.ensure_stopped()

    expected = source_rows(mariadb, db, "l1", ["id"])
    assert expected[json.dumps({"id": 1})]["c"] == "\x81\x8d\x8f\x90\x9d"
    rebuilt, envelopes = rebuild(broker.bootstrap, f"{db}.{db}.l1")
    assert rebuilt == expected
    after = {(e["op"], e["after"]["id"]): e["after"] for e in envelopes if e["after"]}
    one, two = expected[json.dumps({"id": 1})], expected[json.dumps({"id": 2})]
    assert after[("c", 1)] == one and after[("u", 2)] == two  # streamed
    assert after[("r", 1)] == one and after[("r", 2)] == two  # snapshotted
