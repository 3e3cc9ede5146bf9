"""Signals that used to crash-loop the connector (#22), against the real replica and broker: a
compile-time regex bomb is refused in one line (topic and REST) while streaming goes on, and
a signal whose handling was SIGKILLed is skipped on the next start in one line."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.connector_tools import ConnectorProcess, connector_document
from tests.integration.test_signal_attacks import consumed, make_tables, outcome_lines
from tests.integration.test_signal_fuzz import peak_rss_kib
from tests.integration.test_snapshot import proc_doc, start
from tests.integration.test_streaming import committed_offsets, wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import produce
from tests.rest_tools import RestClient
from tests.services import MariaDbPair, free_port, wait_for
from tests.tcp_proxy import TcpProxy

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


def test_a_signal_whose_handling_was_killed_is_skipped_on_the_next_start(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    """The connector is SIGKILLed while acting on a signal: between its in-progress mark and
    the end of the action. The action is held there by the replica's connection, frozen
    (nothing forwarded) once the mark is committed; no sleep decides when to kill."""
    db = unique_name
    make_tables(mariadb, db, "t")
    proxy = TcpProxy(mariadb.replica.port)
    try:
        doc: dict[str, Any] = connector_document(mariadb, broker, db,
                                                 database__port=str(proxy.port))
        proc = ConnectorProcess(doc, tmp_path)
        connector.append(proc)
        proc.start()
        proc.wait_log("streaming from")
        # Offset 0 opens the snapshot's catalog session (a table that is not there).
        produce(broker.bootstrap, f"{db}-signal", [(db.encode(),
                                                    snapshot_of(f"{db}.nope", "warm-0"))])
        consumed(broker, proc, 1)
        assert proxy.freeze() >= 1  # every open connection, that session among them
        produce(broker.bootstrap, f"{db}-signal", [(db.encode(),
                                                    snapshot_of(f"{db}.t", "killed-1"))])
        wait_for(lambda: (committed_offsets(broker, doc) or {}).get("signal_in_progress") == 1,
                 60, "signal 1 marked in progress")
        proc.kill()  # SIGKILL: it is blocked reading the tables for signal 1
        assert lines_naming(proc, "signal at offset 1") == []

        proc.start()  # new connections are forwarded again
        proc.wait_log("offset 1 skipped: the last run ended while acting on it")
        produce(broker.bootstrap, f"{db}-signal", [(db.encode(),
                                                    snapshot_of(f"{db}.t", "after-2"))])
        proc.wait_log(f"snapshot of {db}.t complete")
        mariadb.primary.execute(f"UPDATE {db}.t SET v = -1 WHERE id = 7")
        wait_caught_up(mariadb, broker, doc, timeout=60)
        wait_for(lambda: (committed_offsets(broker, doc) or {}).get("signal_offset") == 3, 30,
                 "signal 2 committed")
    finally:
        proxy.close()
    second_run = proc.log()[proc.log_offset:]
    about_1 = [line for line in second_run.splitlines()
               if re.search(r"signal at offset 1 \(|offset 1 skipped", line)]
    assert len(about_1) == 1 and "it is not acted on again" in about_1[0], about_1
    assert "signal at offset 2 (execute-snapshot): snapshot after-2: queued" in second_run
    assert "signal_in_progress" not in (committed_offsets(broker, doc) or {})
    assert lines_naming(proc, "signal at offset 1") == []
