"""Writes the binlog holds without whole row images stop the connector with one line.

The global binlog_format is ROW and binlog_row_image FULL (checked at start), but a session
on the server the connector reads may still log its writes as statements or with partial
images (`SET SESSION binlog_format` / `binlog_row_image`, MySQL too, for a user allowed to
set them; or a later SET GLOBAL). These tests read each flavour's primary directly: a ROW
replica re-logs replicated statements as rows, so only the server a session writes on holds
them. Each scenario is one way such a write reached a captured table; before the stop was
there, its rows were missing or wrong (NULLs) in the topic without a word.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.connector_tools import ConnectorProcess, SourcePair, connector_document, rebuild
from tests.kafka_services import Broker
from tests.services import wait_for

SENTINEL = 99  # a row-logged insert after the scenario: seen in the topic = streamed past it


@dataclass(frozen=True)
class Scenario:
    statements: tuple[str, ...]  # on one session of the primary, after SET binlog_format
    writes: str  # what the stop line names: "writes <this> as a statement"
    binlog_format: str = "STATEMENT"
    table: str = "t"  # the captured table whose rows it writes


SCENARIOS = {
    # BEGIN; a write on a table not captured, then one on a captured table.
    "uncaptured_table_first": Scenario(
        ("BEGIN", "INSERT INTO {other}.log (v) VALUES ('audit')",
         "INSERT INTO {db}.t VALUES (3, 'second statement')", "COMMIT"), "{db}.t"),
    # MariaDB's default MIXED logs these as statements too.
    "uncaptured_table_first_mixed": Scenario(
        ("BEGIN", "INSERT INTO {other}.log (v) VALUES ('audit')",
         "INSERT INTO {db}.t VALUES (4, 'second statement')", "COMMIT"), "{db}.t",
        binlog_format="MIXED"),
    # The first table of the JOIN is not captured; the one SET writes is.
    "join_writes_its_second_table": Scenario(
        ("UPDATE {other}.log a JOIN {db}.t o ON o.id = a.id SET o.v = 'joined'",), "{db}.t"),
    # A multi-table write issued from a default database that is not captured.
    "uncaptured_default_database": Scenario(
        ("USE {other}", "UPDATE log a, {db}.t o SET o.v = 'from other' WHERE o.id = a.id"),
        "{db}.t"),
    # A stored function of a database not captured writes a captured table: the binlog
    # holds `SELECT f()` for both, what f wrote cannot be named.
    "do_function_that_writes": Scenario(
        ("DO {other}.f('by do')",), "tables it does not name (default database none)"),
    "select_function_that_writes": Scenario(
        ("USE {other}", "SELECT f('by select')"),
        "tables it does not name (default database {other})"),
    # LOAD DATA logged as a statement: the binlog holds the file's bytes and the statement
    # in events of their own (Begin_load_query, Execute_load_query), not query events.
    "load_data": Scenario(
        ("LOAD DATA INFILE '{rows_file}' INTO TABLE {db}.t (id, v)",), "{db}.t"),
    # The new table's rows come with the statement, none in the binlog.
    "create_table_select": Scenario(
        ("CREATE TABLE {db}.copy SELECT id, v FROM {db}.t",), "{db}.copy", table="copy"),
}


def _primary_document(source: SourcePair, broker: Broker, db: str,
                      **settings: str) -> dict[str, object]:
    return connector_document(source, broker, db, database__port=str(source.primary.port),
                              **settings)


def _prepare(source: SourcePair, db: str, other: str) -> None:
    p = source.primary
    for name in (db, other):
        p.execute(f"CREATE DATABASE {name}")
    p.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(30))")
    p.execute(f"CREATE TABLE {other}.log (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(30))")
    # DETERMINISTIC: what binary logging requires of a function that writes.
    p.execute(f"CREATE FUNCTION {other}.f(x VARCHAR(30)) RETURNS INT DETERMINISTIC "
              f"MODIFIES SQL DATA BEGIN UPDATE {db}.t SET v = x WHERE id = 1; RETURN 1; END")


def _run(source: SourcePair, statements: tuple[str, ...], binlog_format: str, **names: str) -> None:
    conn = source.primary.root()
    try:
        with conn.cursor() as cur:
            cur.execute(f"SET SESSION binlog_format = '{binlog_format}'")
            for statement in statements:
                cur.execute(statement.format(**names))
    finally:
        conn.close()


def _rows_before(source: SourcePair, db: str, other: str) -> None:
    """Rows the scenarios change, row-logged while the connector streams."""
    source.primary.execute(f"INSERT INTO {db}.t VALUES (1, 'a'), (2, 'b')")
    source.primary.execute(f"INSERT INTO {other}.log (id, v) VALUES (1, 'a'), (2, 'b')")


Row = dict[str, object]


def _topic_rows(broker: Broker, db: str, table: str = "t") -> dict[int, Row]:
    rebuilt, _ = rebuild(broker.bootstrap, f"{db}.{db}.{table}")
    return {int(row["id"]): row for row in rebuilt.values()}


def _source_rows(source: SourcePair, db: str, table: str = "t") -> dict[int, Row]:
    conn = source.primary.root()
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT * FROM {db}.{table}")
            names = [d[0] for d in cur.description]
            return {int(row[0]): dict(zip(names, row, strict=True)) for row in cur.fetchall()}
    finally:
        conn.close()


def _lost(source: SourcePair, broker: Broker, db: str, table: str) -> list[int]:
    """The ids whose row in the topic differs from the table's (missing, stale, NULLs)."""
    topic = _topic_rows(broker, db, table)
    return sorted(i for i, row in _source_rows(source, db, table).items()
                  if i != SENTINEL and topic.get(i) != row)


def _stopped_or_streamed_past(proc: ConnectorProcess, broker: Broker, db: str,
                              table: str = "t") -> bool:
    """Wait until the connector exits, or streams the sentinel row written after the
    scenario (then it went past the scenario's transaction): True if it exited."""
    assert proc.proc is not None
    running = proc.proc
    outcome = wait_for(lambda: ("exited" if running.poll() is not None else
                                "streamed" if SENTINEL in _topic_rows(broker, db, table)
                                else None),
                       90, "the connector to stop or stream past the scenario", 0.5)
    return bool(outcome == "exited")


def _restart_with_warn(proc: ConnectorProcess, doc: dict[str, Any]) -> None:
    doc["config"]["event.processing.failure.handling.mode"] = "warn"
    proc.config_path.write_text(json.dumps(doc))
    proc.start()


def _lines(proc: ConnectorProcess, marker: str, since: int = 0) -> list[str]:
    return [line for line in proc.log()[since:].splitlines() if marker in line]


def test_each_statement_logged_write_on_a_captured_table_stops_or_is_named(
        source: SourcePair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """The first scenario stops the connector (exit 1, one line); restarted with warn, that
    one and every other way such a write reaches a captured table get one line each, in
    order, and the stream goes on (one connector for all: each start costs seconds)."""
    names = list(SCENARIOS)
    db, other = unique_name, f"{unique_name}_x"
    _prepare(source, db, other)
    rows_file = tmp_path / "rows.tsv"  # LOAD DATA's: the server reads it
    rows_file.write_text("5\tloaded\n6\tloaded\n")
    values = {"db": db, "other": other, "rows_file": str(rows_file)}
    doc = _primary_document(source, broker, db)
    proc = ConnectorProcess(doc, tmp_path)
    proc.start()
    try:
        proc.wait_log("binlog stream open")
        _rows_before(source, db, other)
        first = SCENARIOS[names[0]]
        _run(source, first.statements, first.binlog_format, **values)
        source.primary.execute(f"INSERT INTO {db}.t VALUES ({SENTINEL}, 'row-logged after')")
        stopped = _stopped_or_streamed_past(proc, broker, db)
        lost = _lost(source, broker, db, first.table)
        assert lost, f"{names[0]}: the scenario changed no row of {db}.{first.table}"
        assert stopped, f"{names[0]}: streamed past it, rows {lost} wrong without a word"
        assert proc.proc is not None and proc.proc.returncode == 1
        lines = _lines(proc, "as a statement")
        assert len(lines) == 1, proc.log()[-3000:]
        writes = first.writes.format(**values)
        assert re.search(rf"stopping: transaction GTID \S+ writes {re.escape(writes)} as a "
                         "statement", lines[0]), lines[0]
        assert "binlog_format=ROW" in lines[0]
        _restart_with_warn(proc, doc)
        proc.wait_log("binlog stream open")
        for name in names[1:]:
            _run(source, SCENARIOS[name].statements, SCENARIOS[name].binlog_format, **values)
        source.primary.execute(f"INSERT INTO {db}.t VALUES ({SENTINEL + 1}, 'after all')")
        wait_for(lambda: SENTINEL + 1 in _topic_rows(broker, db), 90, "the last sentinel", 0.5)
    finally:
        proc.ensure_stopped()
    lines = _lines(proc, "as a statement", proc.log_offset)
    assert len(lines) == len(names), "\n".join(lines)
    for name, line in zip(names, lines, strict=True):
        writes = SCENARIOS[name].writes.format(**values)
        assert re.search(rf"skipped: transaction GTID \S+ writes {re.escape(writes)} as a "
                         "statement", line), f"{name}: {line}"


def test_statement_logged_writes_on_tables_not_captured_pass(
        source: SourcePair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """Only writes on captured tables stop it: statement-logged writes of other tables alone
    (several statements of a transaction, a JOIN that reads a captured table) and their
    MINIMAL row images stream on."""
    db, other = unique_name, f"{unique_name}_x"
    _prepare(source, db, other)
    proc = ConnectorProcess(_primary_document(source, broker, db), tmp_path)
    proc.start()
    try:
        proc.wait_log("binlog stream open")
        _rows_before(source, db, other)
        _run(source, ("BEGIN", "INSERT INTO {other}.log (v) VALUES ('a')",
                      "UPDATE {other}.log SET v = 'b'", "COMMIT",
                      "UPDATE {db}.t o JOIN {other}.log a ON a.id = o.id SET a.v = o.v",
                      "SET SESSION binlog_format = 'ROW'",
                      "SET SESSION binlog_row_image = 'MINIMAL'",
                      "UPDATE {other}.log SET v = 'minimal' WHERE id = 1"),
             "STATEMENT", db=db, other=other)
        source.primary.execute(f"INSERT INTO {db}.t VALUES ({SENTINEL}, 'row-logged after')")
        assert not _stopped_or_streamed_past(proc, broker, db), proc.log()[-3000:]
    finally:
        proc.ensure_stopped()
    assert _topic_rows(broker, db) == _source_rows(source, db)
    assert "as a statement" not in proc.log() and "row images" not in proc.log()


# -- partial row images ---------------------------------------------------------------------

@dataclass(frozen=True)
class ImageScenario:
    statements: tuple[str, ...]  # on one session of the primary (binlog_format ROW)
    left_out: str  # the columns the stop line names
    global_image: str | None = None  # SET GLOBAL binlog_row_image before the session opens


IMAGE_SCENARIOS = {
    # A session switches to MINIMAL mid-stream: the update's images hold id and v only.
    "session_minimal_update": ImageScenario(
        ("SET SESSION binlog_row_image = 'MINIMAL'",
         "UPDATE {db}.w SET v = 'minimal' WHERE id = 1"), "id, v, note, body"),
    # MINIMAL inserts hold the columns given: note's DEFAULT would go out as NULL (a NOT NULL
    # column takes its declared DEFAULT; a nullable one cannot be told from NULL).
    "session_minimal_insert": ImageScenario(
        ("SET SESSION binlog_row_image = 'MINIMAL'", "INSERT INTO {db}.w (id, v) VALUES (3, 'x')"),
        "note, body"),
    # NOBLOB leaves out a TEXT/BLOB column the update does not change.
    "session_noblob_update": ImageScenario(
        ("SET SESSION binlog_row_image = 'NOBLOB'",
         "UPDATE {db}.w SET v = 'noblob' WHERE id = 1"), "body"),
    # A SET GLOBAL after the start check: sessions opened after it log MINIMAL images.
    "global_minimal_update": ImageScenario(
        ("UPDATE {db}.w SET v = 'global' WHERE id = 1",), "id, v, note, body",
        global_image="MINIMAL"),
}


def _run_image_scenario(source: SourcePair, scenario: ImageScenario, db: str) -> None:
    if scenario.global_image:
        source.primary.execute(f"SET GLOBAL binlog_row_image = '{scenario.global_image}'")
    try:
        _run(source, scenario.statements, "ROW", db=db)
    finally:
        source.primary.execute("SET GLOBAL binlog_row_image = 'FULL'")


def test_each_partial_row_image_of_a_captured_table_stops_or_is_named(
        source: SourcePair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """The first scenario stops the connector (exit 1, one line); restarted with warn, each
    such rows event is skipped with one line and no row goes out with NULLs for the
    columns its images left out."""
    names = list(IMAGE_SCENARIOS)
    db, other = unique_name, f"{unique_name}_x"
    _prepare(source, db, other)
    source.primary.execute(f"CREATE TABLE {db}.w (id INT PRIMARY KEY, v VARCHAR(30), "
                           "note VARCHAR(30) DEFAULT 'default', body TEXT)")
    doc = _primary_document(source, broker, db)
    proc = ConnectorProcess(doc, tmp_path)
    proc.start()
    marker = "row images that leave out"
    try:
        proc.wait_log("binlog stream open")
        source.primary.execute(f"INSERT INTO {db}.w VALUES (1, 'a', 'n1', 'body 1'), "
                               "(2, 'b', 'n2', 'body 2')")
        _run_image_scenario(source, IMAGE_SCENARIOS[names[0]], db)
        source.primary.execute(f"INSERT INTO {db}.w VALUES ({SENTINEL}, 'after', 'n', 'b')")
        stopped = _stopped_or_streamed_past(proc, broker, db, "w")
        lost = _lost(source, broker, db, "w")
        assert lost, f"{names[0]}: the scenario changed no row of {db}.w"
        assert stopped, f"{names[0]}: streamed past it, rows {lost} wrong without a word"
        assert proc.proc is not None and proc.proc.returncode == 1
        lines = _lines(proc, marker)
        assert len(lines) == 1, proc.log()[-3000:]
        assert re.search(rf"stopping: transaction GTID \S+ writes {db}\.w with row images "
                         rf"that leave out {IMAGE_SCENARIOS[names[0]].left_out} "
                         r"\(binlog_row_image MINIMAL or NOBLOB\)", lines[0]), lines[0]
        assert "set binlog_row_image=FULL" in lines[0]
        _restart_with_warn(proc, doc)
        proc.wait_log("binlog stream open")
        for name in names[1:]:
            _run_image_scenario(source, IMAGE_SCENARIOS[name], db)
        source.primary.execute(f"INSERT INTO {db}.w VALUES ({SENTINEL + 1}, 'last', 'n', 'b')")
        wait_for(lambda: SENTINEL + 1 in _topic_rows(broker, db, "w"), 90, "the last sentinel",
                 0.5)
    finally:
        proc.ensure_stopped()
    lines = _lines(proc, marker, proc.log_offset)
    assert len(lines) == len(names), "\n".join(lines)
    for name, line in zip(names, lines, strict=True):
        assert re.search(rf"skipped: transaction GTID \S+ writes {db}\.w with row images that "
                         rf"leave out {IMAGE_SCENARIOS[name].left_out} ", line), f"{name}: {line}"
    assert all(row["note"] is not None and row["body"] is not None
               for row in _topic_rows(broker, db, "w").values())
