"""An XA transaction left prepared on MySQL: the offsets leave out only its prepare GTID,
so a restart reads that group again and repeats nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from connector.gtid import GtidSet
from tests.connector_tools import connector_document, streaming_connector
from tests.integration.test_streaming import committed_offsets, wait_caught_up
from tests.integration.test_transactions import execute_each
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.mysql_services import MySqlPair
from tests.services import wait_for


def test_offsets_leave_out_only_the_open_xa(mysql: MySqlPair, broker: Broker,
                                            unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    mysql.primary.execute(f"CREATE DATABASE {db}")
    mysql.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    mysql.wait_synced()
    doc = connector_document(mysql, broker, db)
    with streaming_connector(doc, tmp_path) as proc:
        before = GtidSet.parse(mysql.primary.gtid_executed())
        xa = mysql.primary.root(db)
        execute_each(xa, ("XA START 'x'", "INSERT INTO t VALUES (1, 'xa')", "XA END 'x'",
                          "XA PREPARE 'x'"))
        prepared = GtidSet.parse(mysql.primary.gtid_executed()) - before
        assert len(prepared) == 1
        for row in (2, 3):
            mysql.primary.execute(f"INSERT INTO {db}.t VALUES ({row}, 'after prepare')")
        expected = GtidSet.parse(mysql.wait_synced()) - prepared

        def offsets() -> GtidSet | None:
            stored = committed_offsets(broker, doc)
            return None if stored is None else GtidSet.parse(stored["gtids"])

        wait_for(lambda: offsets() == expected, 60, f"offsets {expected}")
        assert proc.stop() == 0
        execute_each(xa, ["XA COMMIT 'x'"])
        xa.close()
        proc.start()
        proc.wait_log("resuming from committed offsets")
        wait_caught_up(mysql, broker, doc, timeout=60)
        assert proc.stop() == 0
    ids = [json.loads(m.value())["payload"]["after"]["id"]
           for m in consume_all(broker.bootstrap, f"{db}.{db}.t") if m.value() is not None]
    assert ids == [2, 3, 1]  # nothing after the prepare sent twice
