"""gtidmark against Debezium 3.6.1 on Kafka Connect, on the same replica, same statements.

One Debezium connector on the session's Connect worker and one `gtidmark run` per flavour,
MariaDB and MySQL (tests/conformance/runs.py): the snapshot tables are read by both, then the
scripted statements (scenarios.py, and on MySQL mysql_scenarios.py too) stream through both and
every record is compared, with the differences compare.py allows. Each flavour once more
with JsonConverter without schemas on both (keys and values bare payloads, compared in an
envelope of their own).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conformance.compare import Record, allowed, by_topic, compare_sequences, differences
from tests.conformance.runs import Run, conformance_run, target
from tests.connect_services import ConnectWorker
from tests.kafka_services import Broker


@pytest.fixture(scope="module", params=["mariadb", "mysql", "mariadb-schemaless",
                                                "mysql-schemaless"])
def run(request: pytest.FixtureRequest, broker: Broker, connect_worker: ConnectWorker,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """A flavour's run with the worker's JsonConverter (schemas), or `<flavour>-schemaless`."""
    flavour, _, converter = str(request.param).partition("-")
    pair = request.getfixturevalue("dbz_mariadb" if flavour == "mariadb" else "mysql")
    work = tmp_path_factory.mktemp(f"conformance-{request.param}")
    yield conformance_run(pair, broker, connect_worker, work,
                          target(flavour, broker, converter or "json"))


def _assert_same(problems: list[str]) -> None:
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:80])


def _change_topics(db: str, records: list[Record]) -> dict[str, list[Record]]:
    return {t: rs for t, rs in by_topic(records).items() if t.startswith(f"{db}.{db}.")}


def _streamed(records: list[Record]) -> list[Record]:
    return [r for r in records if r["value"] is None or r["value"]["payload"].get("op") != "r"]


def test_records_written_by_the_runs_converter(run: Run) -> None:
    """Each side's keys and values as its converter writes them: an envelope with the
    schema, or the bare payload (Debezium's connector-level override taken by the worker)."""
    def shapes(records: list[Record]) -> set[bool]:
        return {isinstance(doc, dict) and set(doc) == {"schema", "payload"}
                for r in records for doc in (r["key"], r["value"]) if doc is not None}
    expected = {run.converter == "json"}
    assert (shapes(run.debezium_raw), shapes(run.ours_raw)) == (expected, expected)


def test_change_events_equal_debezium(run: Run) -> None:
    ours = _change_topics(run.db, _streamed(run.ours))
    theirs = _change_topics(run.db, _streamed(run.debezium))
    problems = [f"topics: Debezium {sorted(theirs)} != gtidmark {sorted(ours)}"] \
        if set(ours) != set(theirs) else []
    for topic in sorted(theirs):
        problems += compare_sequences(theirs[topic], ours.get(topic, []), topic,
                                      flavour=run.flavour)
    _assert_same(problems)


def test_key_headers_equal_debezium(run: Run) -> None:
    """The `__debezium.newkey`/`oldkey` headers byte for byte: both written as the worker's
    default header.converter (SimpleHeaderConverter) writes Debezium's key struct."""
    def headers(records: list[Record]) -> list[Any]:
        ordered = sorted(_streamed(records), key=lambda r: str(r["topic"]))  # stable
        return [(r["topic"], {k: v for k, v in r["header_text"].items()
                              if k.startswith("__debezium.") and "context" not in k})
                for r in ordered if r["topic"].startswith(f"{run.db}.{run.db}.")]
    theirs = headers(run.debezium)
    assert any(h for _, h in theirs), "the run has no primary-key change"
    assert headers(run.ours) == theirs


def test_snapshot_reads_equal_debezium(run: Run) -> None:
    def reads(records: list[Record]) -> list[Record]:
        found = [r for r in records if r["value"] is not None
                 and r["value"]["payload"].get("op") == "r"]
        return sorted(found, key=lambda r: (r["topic"], json.dumps(r["key"], sort_keys=True)))
    # When and where each read: gtidmark writes its window's position; Debezium the binlog
    # position its snapshot had reached, with the server id, GTID and thread of the event
    # that closed the window (on MySQL a transaction of the run's tick database, see
    # runs.py). On MariaDB, Debezium's blocking snapshot also says "first"/"true"/"last"
    # where gtidmark says "incremental"; on MySQL both run incremental.
    masks = ("source.ts_ms", "source.ts_us", "source.ts_ns", "source.file", "source.pos",
             "source.server_id", "source.gtid", "source.thread")
    if run.flavour == "mariadb":
        masks += ("source.snapshot",)
    _assert_same(compare_sequences(reads(run.debezium), reads(run.ours), "r", masks,
                                   run.flavour))


def test_schema_changes_equal_debezium(run: Run) -> None:
    def changes(records: list[Record]) -> list[Record]:
        # Debezium's MySQL connector reports MariaDB's dummy events ("# Dummy event ...")
        # as schema changes; they are not DDL.
        return [r for r in records if r["topic"] == run.db
                and r["value"]["payload"]["source"]["snapshot"] == "false"
                and not r["value"]["payload"]["ddl"].startswith("# Dum")]
    _assert_same(compare_sequences(changes(run.debezium), changes(run.ours), "schema change",
                                   flavour=run.flavour))


def test_transaction_metadata_equal_debezium(run: Run) -> None:
    topic = f"{run.db}.transaction"
    theirs, ours = by_topic(run.debezium)[topic], by_topic(run.ours)[topic]
    # Debezium's read-only snapshot sends a window's rows (no transaction block) when a
    # transaction past the window closes it: on MySQL here one of the tick database's,
    # which then shows as a BEGIN and an END of no events. gtidmark's windows close on no
    # transaction; it sends no empty ones.
    empty = {r["value"]["payload"]["id"] for r in theirs
             if r["value"]["payload"]["status"] == "END"
             and r["value"]["payload"]["event_count"] == 0}
    assert not [r for r in ours if r["value"]["payload"]["event_count"] == 0]
    theirs = [r for r in theirs if r["value"]["payload"]["id"] not in empty]
    _assert_same(compare_sequences(theirs, ours, topic, flavour=run.flavour))


def test_heartbeat_equal_debezium(run: Run) -> None:
    topic = f"__debezium-heartbeat.{run.db}"
    theirs, ours = by_topic(run.debezium)[topic], by_topic(run.ours)[topic]
    assert theirs and ours
    _assert_same(compare_sequences(theirs[:1], ours[:1], topic, ("ts_ms",), run.flavour))


def test_schema_history_records_equal_debezium(run: Run) -> None:
    """Our history topic holds what Debezium's schema history would (its JSON serializer)."""
    def streamed(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for r in records:
            if "snapshot" in r["position"] or r["ddl"].startswith("# Dum"):
                continue  # its initial snapshot; MariaDB dummy events (see above)
            # time; on MariaDB the GTID, ours only (Debezium's MariaDB history holds none)
            position = {k: v for k, v in r["position"].items()
                        if k != "ts_sec" and (k != "gtids" or run.flavour == "mysql")}
            out.append({**r, "position": position, "ts_ms": None})
        return out
    theirs, ours = streamed(run.debezium_history), streamed(run.ours_history)
    problems = [f"history: Debezium {len(theirs)} records, gtidmark {len(ours)}"] \
        if len(theirs) != len(ours) else []
    for i, (a, b) in enumerate(zip(theirs, ours, strict=False)):
        problems += [f"history[{i}] {d}" for d in differences(a, b)]
    _assert_same([p for p in problems if not allowed(p)])
