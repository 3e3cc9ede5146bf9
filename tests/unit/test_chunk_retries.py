"""A chunk the replica refuses is read again; a table that cannot be read is FAILED, never
finished, and the tables after it go on.

The chunk reader process is the stand-in of test_chunk_read_ahead (the integration tests
kill real chunk queries); the coordinator, its retries, the view and its reports are the
product's.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from connector.control import EngineView, SnapshotView
from connector.rest.connect import state_info
from connector.rest.metrics import registry
from connector.snapshot import retries
from connector.snapshot.chunk_reader import ChunkReadFailed
from connector.snapshot.coordinator import SnapshotCoordinator
from connector.snapshot.progress import TableProgress
from connector.snapshot.state import SnapshotState
from tests.unit.test_chunk_read_ahead import Reader, chunk, coordinator, pos, row
from tests.unit.test_dashboard_metrics import CONFIG

KILLED = (1317, "error 1317 (query interrupted)")
DENIED = (1142, "error 1142 (SELECT denied)")


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The backoff's length is not what these tests are about: retry at the next step."""
    monkeypatch.setattr(retries, "FIRST_DELAY_S", 0.0)


def refuse(snap: SnapshotCoordinator, reader: Reader, error: tuple[int, str]) -> None:
    """The chunk asked for last fails with `error`; the coordinator hears of it, then asks
    again (or for the next table's chunk)."""
    reader.answers.append(ChunkReadFailed(reader.requests[-1].number, *error))
    snap.step(pos(10), caught_up=True)
    snap.step(pos(10), caught_up=True)


def two_tables() -> tuple[SnapshotCoordinator, Reader, list[list[Any]]]:
    snap, reader, emitted = coordinator()
    snap.restore(SnapshotState(id="s", tables=[TableProgress(table="d.t"),
                                               TableProgress(table="d.u")]))
    snap.step(pos(10), caught_up=True)
    return snap, reader, emitted


def failed_metrics(snap: SnapshotCoordinator) -> dict[str, float]:
    view = EngineView(state="RUNNING", snapshot=SnapshotView(
        failed=tuple((f.table, f.reason) for f in snap.state.failed)))
    text = generate_latest(registry(CONFIG, lambda: view)).decode()
    return {s.labels.get("table", ""): s.value for f in text_string_to_metric_families(text)
            for s in f.samples if s.name == "gtidmark_snapshot_table_failed"}


def test_a_killed_chunk_query_is_read_again_and_nothing_is_lost() -> None:
    snap, reader, emitted = coordinator()
    snap.step(pos(10), caught_up=True)
    refuse(snap, reader, KILLED)
    refuse(snap, reader, KILLED)
    assert emitted == [] and snap.state.tables[0].table == "d.t"
    assert [r.after for r in reader.requests] == [None, None, None]  # the same chunk again
    reader.answers.append(chunk(reader.requests[-1], [row(1, 0), row(2, 0)], pos(10)))
    snap.step(pos(10), caught_up=True)
    reader.answers.append(chunk(reader.requests[-1], [row(3, 0), row(4, 0)], pos(10)))
    snap.step(pos(10), caught_up=True)
    assert emitted == [[row(1, 0), row(2, 0)], [row(3, 0), row(4, 0)]]
    assert snap.completed == ["d.t"] and not snap.state.failed
    assert snap.meter.completed and not snap.meter.aborted


def test_a_table_refused_after_every_retry_is_failed_not_finished(
        caplog: pytest.LogCaptureFixture) -> None:
    snap, reader, emitted = two_tables()
    caplog.set_level(logging.INFO, "gtidmark.snapshot")
    for _ in range(retries.READ_ATTEMPTS):
        assert snap.state.tables[0].table == "d.t"
        refuse(snap, reader, KILLED)
    # The next table goes on, and the snapshot ends FAILED, never "finished".
    assert [t.table for t in snap.state.tables] == ["d.u"]
    reader.answers.append(chunk(reader.requests[-1], [row(1, 0)], pos(10), full=False))
    snap.step(pos(10), caught_up=True)
    assert snap.completed == ["d.u"] and emitted == [[row(1, 0)]]
    assert [(f.table, f.reason, f.snapshot) for f in snap.state.failed] == [
        ("d.t", "error 1317 (query interrupted), 6 tries", "s")]
    assert not snap.meter.completed and snap.meter.aborted
    messages = [r.getMessage() for r in caplog.records]
    assert "snapshot of d.t FAILED after 0 rows: error 1317 (query interrupted), 6 tries; " \
           "its other rows were not sent" in messages
    assert "snapshot s ended; FAILED: d.t" in messages
    assert not any("finished" in m or "d.t complete" in m for m in messages)
    # The offsets keep the failure (status reads them), and so do /metrics and REST.
    saved = snap.saved()
    assert saved is not None and not saved.active
    assert SnapshotState.from_json(saved.to_json()).failed == snap.state.failed
    assert failed_metrics(snap) == {"d.t": 1}
    rest = state_info(CONFIG, EngineView(state="RUNNING", snapshot=SnapshotView(
        failed=(("d.t", snap.state.failed[0].reason),))))
    assert rest["snapshot"] == {"failed": [{"table": "d.t", "state": "FAILED",
                                            "reason": snap.state.failed[0].reason}]}
    assert rest["tasks"][0]["state"] == "RUNNING"


def test_a_denied_select_fails_the_table_at_once() -> None:
    snap, reader, _ = two_tables()
    refuse(snap, reader, DENIED)
    assert [t.table for t in snap.state.tables] == ["d.u"]
    assert [f.reason for f in snap.state.failed] == ["error 1142 (SELECT denied), 1 try"]


def test_a_lost_connection_is_retried_for_as_long_as_it_lasts() -> None:
    snap, reader, _ = coordinator()
    snap.step(pos(10), caught_up=True)
    for _ in range(retries.READ_ATTEMPTS * 2):
        refuse(snap, reader, (2013, "error 2013 (connection lost)"))
    assert snap.state.tables[0].table == "d.t" and not snap.state.failed


def test_a_failed_table_dropped_is_failed_no_more() -> None:
    snap, reader, _ = two_tables()
    refuse(snap, reader, DENIED)
    assert failed_metrics(snap) == {"d.t": 1}
    snap.on_ddl("d.t", "DROP")  # dropped: none of its rows are missing any more
    assert not snap.state.failed and failed_metrics(snap) == {}


def test_the_failures_of_a_stopped_table_do_not_count_for_the_next() -> None:
    counted = retries.ReadRetries()
    for _ in range(retries.READ_ATTEMPTS - 1):
        assert counted.failed(1317, "d.t", "killed") is not None
    assert counted.failed(1317, "d.u", "killed") is not None  # d.t was stopped meanwhile
    assert counted.tries() == "1 try"
