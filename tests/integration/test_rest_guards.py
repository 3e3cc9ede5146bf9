"""What a REST user may ask of a running `gtidmark run`: no more than a signal could, and
nothing of an instance that does not lead."""

from __future__ import annotations

import json
import time
from pathlib import Path

from connector.control import NOT_LEADING
from connector.offsets.value import SNAPSHOT_KEY
from connector.settings.parse import parse_config
from tests.connector_tools import lease_holder
from tests.integration.test_rest import (
    assert_connect_error,
    create_table,
    insert,
    offsets_records,
    ready_connector,
    wait_events,
    wait_ready,
)
from tests.integration.test_streaming import committed_offsets
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic
from tests.rest_tools import rest_connector
from tests.services import MariaDbPair


def test_patched_snapshot_state_takes_only_what_a_signal_could(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """A stopped connector's offsets PATCHed with a snapshot of `mysql.global_priv`, or a
    chunk_size of 1e9, are refused with a 400 naming it and nothing is written; a snapshot
    state of a captured table is taken and, on resume, snapshotted."""
    db = unique_name
    with ready_connector(mariadb, broker, db, tmp_path, rows=40) as (conn, client, doc):
        name = doc["name"]
        offsets = f"/connectors/{name}/offsets"
        assert client.call("PUT", f"/connectors/{name}/stop").status == 204
        stored = committed_offsets(broker, doc)
        assert stored is not None
        written_before = len(offsets_records(broker, doc))

        def patched(snapshot: str) -> object:
            value = {**stored, SNAPSHOT_KEY: snapshot}
            return client.call("PATCH", offsets, {"offsets": [{"partition": {"server": db},
                                                               "offset": value}]})

        system = json.dumps({"id": "x", "paused": False, "tables": [
            {"table": f"{db}.t"}, {"table": "mysql.global_priv"}]})
        assert_connect_error(patched(system), 400,
                             "offset.snapshot_state: table \"mysql.global_priv\" is not captured by "
                             "this connector (its include/exclude lists)")
        huge_chunks = system.replace('"paused": false', '"paused": false, "chunk_size": 1e9') \
            .replace(', {"table": "mysql.global_priv"}', "")
        assert "1e9" in huge_chunks and "global_priv" not in huge_chunks
        refused = patched(huge_chunks)
        assert_connect_error(refused, 400)
        assert refused.body["message"].startswith("offset.snapshot_state: chunk_size 1000000000.0")
        assert len(offsets_records(broker, doc)) == written_before  # nothing written

        captured = json.dumps({"id": "rest-patch", "paused": False, "chunk_size": 16,
                               "tables": [{"table": f"{db}.t"}]})
        assert patched(captured).status == 200
        assert client.call("PUT", f"/connectors/{name}/resume").status == 202
        conn.wait_log(f"snapshot of {db}.t complete")
        reads = [e for e in wait_events(broker, db, 40) if e["op"] == "r"]
        assert sorted(e["after"]["id"] for e in reads) == list(range(1, 41))
        assert conn.stop() == 0


def test_a_standby_refuses_commands_at_once(mariadb: MariaDbPair, broker: Broker,
                                            unique_name: str, tmp_path: Path) -> None:
    """Commands sent to an instance waiting for the lease are a 409 at once (Connect's answer
    when a request cannot reach the leader), not queued: once it leads it runs, neither
    paused nor stopped by what it was sent as a standby."""
    db = unique_name
    create_table(mariadb, db, 0)
    conn, client, doc = rest_connector(mariadb, broker, db, tmp_path)
    config = parse_config(doc)
    name = doc["name"]
    create_topic(broker.bootstrap, config.signal_kafka_topic, 1)
    with lease_holder(broker.bootstrap, config.name, config.signal_kafka_topic) as holder:
        try:
            conn.start()
            conn.wait_log("standby: waiting for the lease")
            status = client.get(f"/connectors/{name}/status").body
            assert status["connector"]["state"] == "UNASSIGNED"
            current = {"gtids": "0-1-1"}
            for method, sub, body in (("PUT", "pause", None), ("PUT", "stop", None),
                                      ("POST", "restart", None), ("PUT", "resume", None),
                                      ("DELETE", "offsets", None),
                                      ("PATCH", "offsets", {"offsets": [{
                                          "partition": {"server": db}, "offset": current}]})):
                started = time.monotonic()
                reply = client.call(method, f"/connectors/{name}/{sub}", body, timeout=10)
                assert_connect_error(reply, 409, NOT_LEADING)  # before the fix: pause 202
                assert time.monotonic() - started < 5, (method, sub)
            holder.kill()  # the lease passes to the instance
            holder.wait(30)
            wait_ready(client)  # leads, RUNNING: nothing sent as a standby paused or stopped it
            insert(mariadb, db, range(1, 4))
            wait_events(broker, db, 3)
            assert "(REST)" not in conn.log()  # no command was acted on
            assert conn.stop() == 0
        finally:
            conn.ensure_stopped()
