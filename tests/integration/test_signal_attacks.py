"""Hostile `additional-conditions` against the running connector and the real replica: no
other table is read, nothing leaks into the log, nothing sleeps, no quote escapes."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tests.connector_tools import ConnectorProcess
from tests.general_log import cdc_statements, general_log
from tests.integration.test_snapshot import proc_doc, start
from tests.integration.test_streaming import committed_offsets, wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, produce
from tests.services import MariaDbPair, wait_for

pytestmark = pytest.mark.integration
SECRET = "TOPSECRET-4711"


def make_tables(mariadb: MariaDbPair, db: str, *tables: str) -> None:
    p = mariadb.primary
    p.execute(f"CREATE DATABASE {db}")
    p.execute(f"CREATE TABLE {db}.secrets (k VARCHAR(40) PRIMARY KEY)")
    p.execute(f"INSERT INTO {db}.secrets VALUES ('{SECRET}')")
    for table in tables:
        p.execute(f"CREATE TABLE {db}.{table} (id INT PRIMARY KEY, s VARCHAR(20), v INT)")
        p.execute(f"INSERT INTO {db}.{table} SELECT seq, CONCAT('s', seq), seq "
                  f"FROM {db}.seq_1_to_3000")
    mariadb.wait_synced()


def send_filter(broker: Broker, db: str, table: str, where: str) -> None:
    value = {"type": "execute-snapshot", "id": f"attack-{table}",
             "data": {"data-collections": [f"{db}.{table}"], "type": "incremental",
                      "additional-conditions": [{"data-collection": f"{db}.{table}",
                                                 "filter": where}]}}
    produce(broker.bootstrap, f"{db}-signal", [(db.encode(), json.dumps(value).encode())])


def outcome_lines(proc: ConnectorProcess) -> list[str]:
    """One line per signal: acted on (`signal at offset N`) or skipped (`offset N skipped`)."""
    return [line for line in proc.log().splitlines()
            if re.search(r"signal at offset \d+ \(|offset \d+ skipped", line)]


def consumed(broker: Broker, proc: ConnectorProcess, n: int) -> None:
    """Wait until the committed offsets are past the first `n` signals."""
    doc = proc_doc(proc)
    wait_for(lambda: (committed_offsets(broker, doc) or {}).get("signal_offset", 0) >= n, 60,
             f"{n} signal(s) consumed")


def reads(broker: Broker, topic: str) -> int:
    return sum(1 for m in consume_all(broker.bootstrap, topic)
               if m.value() is not None and json.loads(m.value())["payload"]["op"] == "r")


def test_filter_cannot_read_another_table_or_leak_it_into_the_log(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    db = unique_name
    make_tables(mariadb, db, "leak", "oracle")
    with general_log(mariadb.replica, tmp_path / "general.log") as path:
        proc = start(mariadb, broker, db, tmp_path, connector)
        send_filter(broker, db, "leak", f"id = 1 AND extractvalue(1, concat(0x7e, (SELECT k "
                                        f"FROM {db}.secrets LIMIT 1))) IS NULL")
        send_filter(broker, db, "oracle", f"id = 1 AND (SELECT COUNT(*) FROM {db}.secrets "
                                          "WHERE k LIKE 'TOP%') > 0")
        consumed(broker, proc, 2)
        time.sleep(2)  # a chunk that would run the filter has had its time
    assert SECRET not in proc.log() and "XPATH" not in proc.log()
    statements = cdc_statements(path)
    assert statements
    assert [s for s in statements if "secrets" in s] == []
    assert reads(broker, f"{db}.{db}.leak") == 0 and reads(broker, f"{db}.{db}.oracle") == 0


def test_filter_cannot_sleep_the_streaming_thread(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    db = unique_name
    make_tables(mariadb, db, "slow", "live")
    proc = start(mariadb, broker, db, tmp_path, connector)
    send_filter(broker, db, "slow", "id < 3 AND SLEEP(20) = 0")
    consumed(broker, proc, 1)
    mariadb.primary.execute(f"UPDATE {db}.live SET v = -1 WHERE id = 7")
    started = time.monotonic()

    def arrived() -> bool:
        return any(m.value() is not None and json.loads(m.value())["payload"]["op"] == "u"
                   for m in consume_all(broker.bootstrap, f"{db}.{db}.live", timeout=5))
    wait_for(arrived, 60, "the update after the SLEEP filter")
    assert time.monotonic() - started < 10
    assert "SLEEP" not in " ".join(
        line for line in proc.log().splitlines() if "signal at offset" not in line
        and "skipped" not in line)


def test_filter_cannot_escape_quotes_under_ansi_quotes_and_no_backslash_escapes(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    """Under NO_BACKSLASH_ESCAPES `'a\\'` ends the string on the server, so the `--` after it
    would comment out `) ORDER BY ... LIMIT n`: the whole table in one chunk. The filter
    matches no row (s is never that text), so nothing may be emitted."""
    db = unique_name
    make_tables(mariadb, db, "quote")
    r = mariadb.replica
    old_mode = r.execute("SELECT @@global.sql_mode")[0][0]
    r.execute("SET GLOBAL sql_mode = 'ANSI_QUOTES,NO_BACKSLASH_ESCAPES'")
    try:
        with general_log(r, tmp_path / "general.log") as path:
            proc = start(mariadb, broker, db, tmp_path, connector,
                         incremental__snapshot__chunk__size="100")
            send_filter(broker, db, "quote", "s = 'a\\' OR 1=1) -- '")
            consumed(broker, proc, 1)
            wait_for(lambda: f"snapshot of {db}.quote complete" in proc.log() or
                     "skipped" in proc.log(), 30, "the snapshot to end")
    finally:
        r.execute("SET GLOBAL sql_mode = %s", (old_mode,))
    assert reads(broker, f"{db}.{db}.quote") == 0
    chunk_selects = [s for s in cdc_statements(path) if "`quote`" in s and "ORDER BY" in s]
    assert chunk_selects and all(re.search(r"LIMIT \d+$", s) for s in chunk_selects)


def test_set_throttle_out_of_range_is_refused_in_one_line(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    db = unique_name
    make_tables(mariadb, db)
    proc = start(mariadb, broker, db, tmp_path, connector)
    produce(broker.bootstrap, f"{db}-signal", [
        (db.encode(), b'{"type": "set-throttle", "data": {"chunk-size": 1000000}}'),
        (db.encode(), b'{"type": "set-throttle", "data": {"chunk-delay-ms": 3600000}}'),
        (db.encode(), b'{"type": "set-throttle", "data": {"chunk-size": 100000}}')])
    consumed(broker, proc, 3)
    lines = outcome_lines(proc)
    assert "offset 0 skipped: set-throttle: data.chunk-size" in lines[0]
    assert "offset 1 skipped: set-throttle: data.chunk-delay-ms" in lines[1]
    assert "chunk size 100000" in lines[2]
    assert "chunk size 1000000" not in proc.log()


def test_large_signal_cannot_inflate_the_offsets_record(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    """One 90 KB filter for twelve tables would be stored twelve times in the offsets:
    over a broker's 1 MB limit, so no offsets could be committed any more."""
    db = unique_name
    tables = [f"t{i}" for i in range(12)]
    make_tables(mariadb, db, *tables)
    proc = start(mariadb, broker, db, tmp_path, connector,
                 incremental__snapshot__chunk__delay__ms="60000")
    value = {"type": "execute-snapshot", "data": {
        "data-collections": [f"{db}.{t}" for t in tables],
        "additional-condition": "id > 0" + " OR id > 0" * 9000}}
    produce(broker.bootstrap, f"{db}-signal", [(db.encode(), json.dumps(value).encode())])
    consumed(broker, proc, 1)
    mariadb.primary.execute(f"UPDATE {db}.t0 SET v = -1 WHERE id = 1")
    wait_caught_up(mariadb, broker, proc_doc(proc), timeout=60)
    sizes = [len(m.value() or b"") for m in consume_all(broker.bootstrap, f"{db}-offsets")]
    assert max(sizes) < 64 * 1024
    assert "offset 0 skipped: value is" in proc.log()
