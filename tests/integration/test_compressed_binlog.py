"""MariaDB's log_bin_compress: refused at start; switched on later, never a silent drop (#22).

With `log_bin_compress=ON` the server writes query and rows events above
`log_bin_compress_min_len` (256 bytes) compressed. The reader skipped those event types: the
rows of a large write were missing from the topic, and a long DDL from the schema history,
without a word. The start check now refuses the setting; a `SET GLOBAL` after it stops the
connector at the first compressed rows event of a captured table (or skips it, named, under
event.processing.failure.handling.mode=warn), and a compressed statement is inflated and
read like any other. These tests read the session primary directly (a setting of the server
the connector reads) and switch the setting back off whatever happens.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.connector_tools import ConnectorProcess, connector_document, rebuild
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all
from tests.services import MariaDbPair, wait_for

SENTINEL = 99  # a short insert after the compressed ones: in the topic = streamed past them
MARKER = "in compressed row events"


@contextmanager
def compressed_binlog(mariadb: MariaDbPair) -> Iterator[None]:
    mariadb.primary.execute("SET GLOBAL log_bin_compress = ON")
    try:
        yield
    finally:
        mariadb.primary.execute("SET GLOBAL log_bin_compress = OFF")


def _document(mariadb: MariaDbPair, broker: Broker, db: str) -> dict[str, Any]:
    return connector_document(mariadb, broker, db, database__port=str(mariadb.primary.port))


def _topic_ids(broker: Broker, db: str) -> set[int]:
    rebuilt, _ = rebuild(broker.bootstrap, f"{db}.{db}.t")
    return {int(row["id"]) for row in rebuilt.values()}


def test_log_bin_compress_on_is_refused_at_start(mariadb: MariaDbPair, broker: Broker,
                                                 unique_name: str, tmp_path: Path,
                                                 connector: list[ConnectorProcess]) -> None:
    mariadb.primary.execute(f"CREATE DATABASE {unique_name}")
    proc = ConnectorProcess(_document(mariadb, broker, unique_name), tmp_path)
    connector.append(proc)
    with compressed_binlog(mariadb):
        proc.start()
        assert proc.proc is not None
        code = proc.proc.wait(60)
    assert code == 2, proc.log()[-2000:]
    lines = [line for line in proc.log().splitlines() if "server variable" in line]
    refusal = ("error: database: server variable log_bin_compress is ON, gtidmark needs "
               "log_bin_compress=OFF (compressed row events are not decoded)")
    assert lines == [refusal], lines


def test_compressed_events_after_the_start_stop_or_are_named_never_dropped(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    """Switched on while streaming: a long DDL (compressed query event) is read as usual;
    the large insert (compressed rows) stops the connector with one line, exit 1; restarted
    with warn, it is skipped with one line and the stream goes on."""
    db, p = unique_name, mariadb.primary
    p.execute(f"CREATE DATABASE {db}")
    p.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v TEXT)")
    doc = _document(mariadb, broker, db)
    proc = ConnectorProcess(doc, tmp_path)
    connector.append(proc)
    proc.start()
    proc.wait_log("binlog stream open")
    p.execute(f"INSERT INTO {db}.t VALUES (1, 'before')")
    binlog, since = p.execute("SHOW MASTER STATUS")[0][:2]
    with compressed_binlog(mariadb):
        p.execute(f"ALTER TABLE {db}.t ADD COLUMN note VARCHAR(20) COMMENT '{'c' * 400}'")
        p.execute(f"INSERT INTO {db}.t VALUES (2, '{'x' * 2000}', 'large')")
        p.execute(f"INSERT INTO {db}.t VALUES ({SENTINEL}, 's', 'n')")  # under 256 bytes
        running = proc.proc
        assert running is not None
        outcome = wait_for(lambda: ("exited" if running.poll() is not None else
                                    "streamed" if SENTINEL in _topic_ids(broker, db) else None),
                           90, "the connector to stop or stream past the large insert", 0.5)
    kinds = {row[2] for row in p.execute(f"SHOW BINLOG EVENTS IN '{binlog}' FROM {since}")}
    assert {"Query_compressed", "Write_rows_compressed_v1"} <= kinds, kinds  # the scenario
    assert outcome == "exited", f"streamed past it: ids {sorted(_topic_ids(broker, db))}"
    assert running.returncode == 1, proc.log()[-2000:]
    lines = [line for line in proc.log().splitlines() if MARKER in line]
    assert len(lines) == 1, proc.log()[-3000:]
    assert re.search(rf"stopping: transaction GTID \S+ writes {db}\.t in compressed row events "
                     r"\(log_bin_compress=ON\), which gtidmark does not decode; set "
                     r"log_bin_compress=OFF", lines[0]), lines[0]

    doc["config"]["event.processing.failure.handling.mode"] = "warn"
    proc.config_path.write_text(json.dumps(doc))
    logged = len(proc.log())
    proc.start()
    wait_for(lambda: SENTINEL in _topic_ids(broker, db), 90, "the sentinel after the skip", 0.5)
    skipped = [line for line in proc.log()[logged:].splitlines() if MARKER in line]
    assert len(skipped) == 1 and "skipped: transaction GTID" in skipped[0], skipped
    assert _topic_ids(broker, db) == {1, SENTINEL}
    history = [json.loads(m.value()) for m in consume_all(broker.bootstrap,
                                                          f"{db}-schema-history")]
    assert any("ADD COLUMN note" in h["ddl"] for h in history), [h["ddl"] for h in history]
