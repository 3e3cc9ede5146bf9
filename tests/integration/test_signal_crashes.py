"""Signals that used to crash-loop the connector (#22), against the real replica and broker: a
compile-time regex bomb is refused in one line (topic and REST) while streaming goes on."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.connector_tools import ConnectorProcess
from tests.integration.test_signal_attacks import consumed, make_tables, outcome_lines
from tests.integration.test_signal_fuzz import peak_rss_kib
from tests.integration.test_snapshot import proc_doc, start
from tests.integration.test_streaming import wait_caught_up
from tests.kafka_tools import produce
from tests.rest_tools import RestClient
from tests.services import Broker, MariaDbPair, free_port, wait_for

pytestmark = pytest.mark.integration

# The signal: 83 bytes of data, 23 GB in regex.compile, then the OOM killer.
BOMB = {"type": "execute-snapshot", "id": "bomb-1",
        "data": {"data-collections": ["(?:a{99999}){99999}"], "type": "incremental"}}


def snapshot_of(table: str, signal_id: str) -> bytes:
    return json.dumps({"type": "execute-snapshot", "id": signal_id,
                       "data": {"data-collections": [table]}}).encode()


def lines_naming(proc: ConnectorProcess, text: str) -> list[str]:
    return [line for line in proc.log().splitlines() if text in line]


def test_compile_bomb_is_refused_in_one_line_and_streaming_goes_on(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    db = unique_name
    make_tables(mariadb, db, "t")
    port = free_port()
    proc = start(mariadb, broker, db, tmp_path, connector, rest__port=str(port))
    client = RestClient(port)
    wait_for(lambda: client.get("/ready").status == 200, 60, "GET /ready 200", interval=0.2)
    started = time.monotonic()
    reply = client.call("POST", f"/connectors/{proc_doc(proc)['name']}/signals", BOMB)
    assert time.monotonic() - started < 5
    assert reply.status == 400, reply
    assert reply.body["message"].startswith(
        "signal rejected: execute-snapshot (id 'bomb-1'): data.data-collections[0]: ")
    assert "refused before compiling" in reply.body["message"]
    # Written to the topic by someone who skips the REST check, then a good signal.
    produce(broker.bootstrap, f"{db}-signal", [(db.encode(), json.dumps(BOMB).encode()),
                                              (db.encode(), snapshot_of(f"{db}.t", "good-2"))])
    consumed(broker, proc, 2)
    proc.wait_log(f"snapshot of {db}.t complete")
    mariadb.primary.execute(f"UPDATE {db}.t SET v = -1 WHERE id = 7")
    wait_caught_up(mariadb, broker, proc_doc(proc), timeout=60)
    assert proc.proc is not None and proc.proc.poll() is None and proc.starts == 1
    lines = outcome_lines(proc)
    assert len(lines) == 2, lines
    assert "offset 0 skipped: execute-snapshot (id 'bomb-1'): data.data-collections[0]: " \
        "'(?:a{99999}){99999}' repeats 9999800001 times" in lines[0]
    assert "signal at offset 1 (execute-snapshot): snapshot good-2: queued" in lines[1]
    assert lines_naming(proc, "bomb-1") == [lines[0]]
    assert peak_rss_kib(proc) < 1024 * 1024
