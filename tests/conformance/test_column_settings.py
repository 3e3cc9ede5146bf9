"""Masks, hashes, truncation, source-type propagation, column include list, message key and
skipped deletes: gtidmark against Debezium 3.6.1 on Kafka Connect with the same settings
(column_settings.py), record for record: snapshot reads, streamed changes, transaction
metadata."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.conformance.column_settings import DB, column_settings_target
from tests.conformance.compare import Record, by_topic, compare_sequences
from tests.conformance.runs import Run, conformance_run
from tests.connect_services import ConnectWorker
from tests.kafka_services import Broker
from tests.services import MariaDbPair

READ_MASKS = ("source.ts_ms", "source.ts_us", "source.ts_ns", "source.file", "source.pos",
              "source.server_id", "source.gtid", "source.thread", "source.snapshot")


@pytest.fixture(scope="module")
def run(dbz_mariadb: MariaDbPair, broker: Broker, connect_worker: ConnectWorker,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    work = tmp_path_factory.mktemp("conformance-columns")
    yield conformance_run(dbz_mariadb, broker, connect_worker, work, column_settings_target())


def _changes(records: list[Record], op_read: bool) -> dict[str, list[Record]]:
    return {t: [r for r in rs if (r["value"] is not None
                                  and r["value"]["payload"].get("op") == "r") == op_read]
            for t, rs in by_topic(records).items() if t.startswith(f"{DB}.{DB}.")}


def _assert_same(problems: list[str]) -> None:
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:80])


def test_streamed_records_with_column_settings_equal_debezium(run: Run) -> None:
    theirs, ours = _changes(run.debezium, False), _changes(run.ours, False)
    assert sorted(theirs) == sorted(ours)
    problems: list[str] = []
    for topic in sorted(theirs):
        problems += compare_sequences(theirs[topic], ours[topic], topic, flavour="mariadb")
    _assert_same(problems)
    deletes = [r for rs in ours.values() for r in rs
               if r["value"] is not None and r["value"]["payload"]["op"] == "d"]
    assert len(deletes) == 1  # the message key's change; the DELETE statements are skipped


def test_snapshot_reads_with_column_settings_equal_debezium(run: Run) -> None:
    def reads(records: list[Record]) -> list[Record]:
        found = [r for rs in _changes(records, True).values() for r in rs]
        return sorted(found, key=lambda r: (r["topic"], json.dumps(r["key"], sort_keys=True)))
    theirs, ours = reads(run.debezium), reads(run.ours)
    assert len(ours) == 4
    _assert_same(compare_sequences(theirs, ours, "r", READ_MASKS, "mariadb"))


def test_transactions_with_skipped_deletes_equal_debezium(run: Run) -> None:
    """Debezium writes a BEGIN and an END of no events for each transaction whose rows it
    skipped (the two DELETE statements), as for any transaction it reads; gtidmark writes
    none for a transaction without records (test_conformance.py). The others are equal."""
    topic = f"{DB}.transaction"
    theirs, ours = by_topic(run.debezium)[topic], by_topic(run.ours)[topic]
    empty = {r["value"]["payload"]["id"] for r in theirs
             if r["value"]["payload"]["status"] == "END"
             and r["value"]["payload"]["event_count"] == 0}
    assert len(empty) == 2
    assert not [r for r in ours if r["value"]["payload"]["event_count"] == 0]
    theirs = [r for r in theirs if r["value"]["payload"]["id"] not in empty]
    _assert_same(compare_sequences(theirs, ours, topic, flavour="mariadb"))
