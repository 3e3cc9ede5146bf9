"""gtidmark against Debezium 3.6.3 on the same replica, over the same statements.

One Debezium run and one `gtidmark run` for the whole module: the snapshot tables are read
by Debezium's initial snapshot and by gtidmark's execute-snapshot (see README "Events" for
why Debezium cannot run an incremental snapshot here), then the scripted statements stream
through both and every record is compared.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from connector.config import parse_config
from signals.send import build_signal, send_signal
from tests.conformance.compare import Record, by_topic, compare_sequences, differences
from tests.conformance.scenarios import SNAPSHOT_SETUP, STREAMING
from tests.connector_tools import ConnectorProcess, connector_document, wait_until
from tests.debezium_runner import DebeziumProcess, mysql_properties
from tests.kafka_tools import consume_all, list_topics
from tests.services import Broker, MariaDbPair

DB = "conf"
SETTINGS = {"provide.transaction.metadata": "true", "heartbeat.interval.ms": "500"}


@dataclass
class Run:
    debezium: list[Record]
    ours: list[Record]
    debezium_history: list[dict[str, Any]]
    ours_history: list[dict[str, Any]]


def _run_sql(pair: MariaDbPair, statements: list[Any]) -> None:
    conn = pair.primary.root(DB, charset="utf8mb4")
    try:
        with conn.cursor() as cur:
            for statement in statements:
                if isinstance(statement, list):
                    cur.execute("BEGIN")
                    for part in statement:
                        cur.execute(part)
                    cur.execute("COMMIT")
                else:
                    cur.execute(statement)
    finally:
        conn.close()


def _kafka_records(broker: Broker) -> list[Record]:
    out: list[Record] = []
    for topic in sorted(list_topics(broker.bootstrap)):
        if not (topic == DB or topic.startswith(f"{DB}.") or topic.endswith(f".{DB}")):
            continue
        for msg in consume_all(broker.bootstrap, topic):
            headers = {k: json.loads(v) if v else None for k, v in (msg.headers() or [])}
            out.append({"topic": topic, "key": json.loads(msg.key()) if msg.key() else None,
                        "value": json.loads(msg.value()) if msg.value() else None,
                        "headers": headers})
    return out


def _has_done(records: list[Record]) -> bool:
    """The last statement's row and its transaction's END (a later batch may carry it)."""
    done = [r for r in records if r["topic"] == f"{DB}.{DB}.done"]
    if not done:
        return False
    tx = done[-1]["value"]["payload"]["transaction"]["id"]
    return any(r["topic"] == f"{DB}.transaction" and r["value"]["payload"]["status"] == "END"
               and r["value"]["payload"]["id"] == tx for r in records)


@pytest.fixture(scope="module")
def run(dbz_mariadb: MariaDbPair, broker: Broker,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    work = tmp_path_factory.mktemp("conformance")
    dbz_mariadb.primary.execute(f"CREATE DATABASE {DB} CHARACTER SET utf8mb4")
    _run_sql(dbz_mariadb, SNAPSHOT_SETUP)
    dbz_mariadb.wait_synced()
    dbz = DebeziumProcess(mysql_properties(
        dbz_mariadb, DB, work / "debezium", **{"database.include.list": DB,
                                               "snapshot.mode": "initial", **SETTINGS}),
        work / "debezium")
    # Any connector.class works: the flavour comes from the server.
    doc = connector_document(dbz_mariadb, broker, DB, **{
        "connector.class": "io.debezium.connector.mysql.MySqlConnector", **SETTINGS})
    ours = ConnectorProcess(doc, work)
    try:
        dbz.start()
        ours.start()
        ours.wait_log("streaming from")
        config = parse_config(doc)
        send_signal(config, build_signal("execute-snapshot",
                                         tables=[f"{DB}.snap", f"{DB}.snap_all"]))
        ours.wait_log(f"snapshot of {DB}.snap_all complete", timeout=120)
        send_signal(config, build_signal("execute-snapshot", tables=[f"{DB}.snap_sk"],
                                         surrogate_key="code"))
        ours.wait_log(f"snapshot of {DB}.snap_sk complete", timeout=120)
        _run_sql(dbz_mariadb, STREAMING)
        debezium = dbz.wait_records(_has_done, 180, "Debezium to see the last statement")
        wait_until(lambda: _has_done(_kafka_records(broker)), 180,
                   "gtidmark to send the last statement")
    finally:
        dbz.stop()
        if ours.proc is not None:
            ours.stop()
    history_file = work / "debezium" / "schema-history.dat"
    result = Run(debezium, _kafka_records(broker),
                 [json.loads(line) for line in history_file.read_text().splitlines() if line],
                 [json.loads(m.value()) for m in consume_all(broker.bootstrap,
                                                             f"{DB}-schema-history")])
    (work / "ours.jsonl").write_text("".join(json.dumps(r) + "\n" for r in result.ours))
    yield result


def _assert_same(problems: list[str]) -> None:
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:80])


def _change_topics(records: list[Record]) -> dict[str, list[Record]]:
    return {t: rs for t, rs in by_topic(records).items() if t.startswith(f"{DB}.{DB}.")}


def _streamed(records: list[Record]) -> list[Record]:
    return [r for r in records if r["value"] is None or r["value"]["payload"].get("op") != "r"]


def test_change_events_equal_debezium(run: Run) -> None:
    ours = _change_topics(_streamed(run.ours))
    theirs = _change_topics(_streamed(run.debezium))
    problems = [f"topics: Debezium {sorted(theirs)} != gtidmark {sorted(ours)}"] \
        if set(ours) != set(theirs) else []
    for topic in sorted(theirs):
        problems += compare_sequences(theirs[topic], ours.get(topic, []), topic)
    _assert_same(problems)


def test_key_headers_equal_debezium(run: Run) -> None:
    def headers(records: list[Record]) -> list[Any]:
        ordered = sorted(_streamed(records), key=lambda r: str(r["topic"]))  # stable
        return [(r["topic"], {k: v for k, v in r["headers"].items()
                              if k.startswith("__debezium.") and "context" not in k})
                for r in ordered if r["topic"].startswith(f"{DB}.{DB}.")]
    assert headers(run.ours) == headers(run.debezium)


def test_snapshot_reads_equal_debezium(run: Run) -> None:
    def reads(records: list[Record]) -> list[Record]:
        found = [r for r in records if r["value"] is not None
                 and r["value"]["payload"].get("op") == "r"]
        return sorted(found, key=lambda r: (r["topic"], json.dumps(r["key"], sort_keys=True)))
    # When and where each read: Debezium's blocking snapshot says "first"/"true"/"last" and
    # the binlog position it started from; gtidmark "incremental" and its window's position.
    masks = ("source.ts_ms", "source.ts_us", "source.ts_ns", "source.snapshot", "source.file",
             "source.pos")
    _assert_same(compare_sequences(reads(run.debezium), reads(run.ours), "r", masks))


def test_schema_changes_equal_debezium(run: Run) -> None:
    def changes(records: list[Record]) -> list[Record]:
        # Debezium's MySQL connector reports MariaDB's dummy events ("# Dummy event ...")
        # as schema changes; they are not DDL.
        return [r for r in records if r["topic"] == DB
                and r["value"]["payload"]["source"]["snapshot"] == "false"
                and not r["value"]["payload"]["ddl"].startswith("# Dum")]
    _assert_same(compare_sequences(changes(run.debezium), changes(run.ours), "schema change"))


def test_transaction_metadata_equal_debezium(run: Run) -> None:
    topic = f"{DB}.transaction"
    _assert_same(compare_sequences(by_topic(run.debezium)[topic], by_topic(run.ours)[topic],
                                   topic))


def test_heartbeat_equal_debezium(run: Run) -> None:
    topic = f"__debezium-heartbeat.{DB}"
    theirs, ours = by_topic(run.debezium)[topic], by_topic(run.ours)[topic]
    assert theirs and ours
    _assert_same(compare_sequences(theirs[:1], ours[:1], topic, ("ts_ms",)))


def test_schema_history_records_equal_debezium(run: Run) -> None:
    """Our history topic holds what Debezium's schema history would (its JSON serializer)."""
    def streamed(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for r in records:
            if "snapshot" in r["position"] or r["ddl"].startswith("# Dum"):
                continue  # its initial snapshot; MariaDB dummy events (see above)
            position = {k: v for k, v in r["position"].items()
                        if k not in ("ts_sec", "gtids")}  # time; MariaDB GTID (ours only)
            out.append({**r, "position": position, "ts_ms": None})
        return out
    theirs, ours = streamed(run.debezium_history), streamed(run.ours_history)
    problems = [f"history: Debezium {len(theirs)} records, gtidmark {len(ours)}"] \
        if len(theirs) != len(ours) else []
    for i, (a, b) in enumerate(zip(theirs, ours, strict=False)):
        problems += [f"history[{i}] {d}" for d in differences(a, b)]
    _assert_same(problems)
