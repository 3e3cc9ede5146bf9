"""transforms=unwrap and converters keeping nulls, against Debezium 3.6.1 on Kafka Connect
(unwrap_run.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conformance.compare import Record, by_topic, compare_sequences
from tests.conformance.unwrap_run import HEADER_PREFIX, UnwrapRun, unwrap_run
from tests.connect_services import ConnectWorker
from tests.kafka_services import Broker
from tests.services import MariaDbPair


@pytest.fixture(scope="module")
def run(dbz_mariadb: MariaDbPair, broker: Broker, connect_worker: ConnectWorker,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[UnwrapRun]:
    yield unwrap_run(dbz_mariadb, broker, connect_worker,
                     tmp_path_factory.mktemp("conformance-unwrap"))


def _assert_same(problems: list[str]) -> None:
    assert not problems, f"{len(problems)} differences:\n" + "\n".join(problems[:80])


def _changes(db: str, records: list[Record]) -> dict[str, list[Record]]:
    return {t: rs for t, rs in by_topic(records).items() if t.startswith(f"{db}.{db}.")}


def test_unwrapped_records_equal_debezium(run: UnwrapRun) -> None:
    """Rows with __deleted, the added fields, tombstones kept, NULLs left NULL."""
    ours, theirs = _changes(run.db, run.ours), _changes(run.db, run.debezium)
    problems = [f"topics: Debezium {sorted(theirs)} != gtidmark {sorted(ours)}"] \
        if set(ours) != set(theirs) else []
    for topic in sorted(theirs):
        problems += compare_sequences(theirs[topic], ours.get(topic, []), topic)
    _assert_same(problems)
    row = ours[f"{run.db}.{run.db}.null_defaults"][0]["value"]["payload"]
    assert (row["e"], row["vc"], row["__deleted"]) == (None, None, "false")


def test_added_headers_equal_debezium(run: UnwrapRun) -> None:
    """In order, repeats kept: a kept tombstone has its delete's headers and `op` again."""
    def headers(records: list[Record]) -> list[Any]:
        return [(r["topic"], [tuple(h) for h in r["header_list"]
                              if h[0].startswith(HEADER_PREFIX)])
                for r in sorted(records, key=lambda r: str(r["topic"]))  # stable
                if r["topic"].startswith(f"{run.db}.{run.db}.")]
    theirs = headers(run.debezium)
    assert any(h for _, h in theirs)
    assert headers(run.ours) == theirs


def test_schema_changes_and_heartbeats_pass_unchanged(run: UnwrapRun) -> None:
    """Not Envelopes: the SMT leaves them as they are (their content is the default run's
    test; here Debezium's no_data start reads the database's charset otherwise)."""
    def changes(records: list[Record]) -> list[Any]:
        return [(r["value"]["schema"]["name"].rpartition(".")[2], r["value"]["payload"]["ddl"])
                for r in records if r["topic"] == run.db
                and r["value"]["payload"]["source"]["snapshot"] is None  # nulls kept
                and not r["value"]["payload"]["ddl"].startswith("# D")]  # MariaDB dummies
    theirs = changes(run.debezium)
    assert len(theirs) == 5 and changes(run.ours) == theirs
    topic = f"__debezium-heartbeat.{run.db}"
    theirs_hb, ours_hb = by_topic(run.debezium)[topic], by_topic(run.ours)[topic]
    assert theirs_hb and ours_hb
    _assert_same(compare_sequences(theirs_hb[:1], ours_hb[:1], topic, ("ts_ms",)))
