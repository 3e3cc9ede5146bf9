"""Signal actions change only the snapshot state, and say what they did in one line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.snapshot import actions
from connector.snapshot.progress import TableProgress
from connector.snapshot.requests import MAX_STATE_BYTES
from connector.snapshot.state import FailedTable, SnapshotState
from signals.models import (
    ExecuteSnapshot,
    Log,
    PauseSnapshot,
    ResumeSnapshot,
    SetThrottle,
    StopSnapshot,
)
from tests.unit.snapshot_strategies import states


class Catalog:
    """Captured tables; a filter mentioning `bad` is refused."""

    def __init__(self, *tables: str) -> None:
        self.tables = list(tables)

    def captured_tables(self) -> list[str]:
        return self.tables

    def condition_refused(self, table: str, condition: str) -> str | None:
        return "no such column bad" if "bad" in condition else None


def execute(*tables: str, **data: object) -> ExecuteSnapshot:
    return ExecuteSnapshot.model_validate({"data-collections": list(tables), **data})


def queued(state: SnapshotState) -> list[str]:
    return [t.table for t in state.tables]


def test_execute_queues_matching_tables_behind_those_queued() -> None:
    state = SnapshotState(tables=[TableProgress(table="app.a")])
    done = actions.act(state, execute("app\\..*", id="sig-1"), Catalog("app.a", "app.b", "x.c"))
    assert queued(state) == ["app.a", "app.b"]
    assert state.id == "sig-1"
    assert done == "snapshot sig-1: queued app.b; app.a is already queued"


def test_execute_keeps_the_running_snapshots_id() -> None:
    state = SnapshotState(id="first", tables=[TableProgress(table="app.a")])
    actions.act(state, execute("app.b", id="second"), Catalog("app.a", "app.b"))
    assert state.id == "first"


def test_execute_refuses_a_filter_the_catalog_refuses() -> None:
    state = SnapshotState()
    signal = execute("app.a", **{"additional-conditions": [
        {"data-collection": "app.a", "filter": "bad = 1"}]})
    with pytest.raises(actions.SnapshotRefused, match="filter for app.a refused"):
        actions.act(state, signal, Catalog("app.a"))
    assert state == SnapshotState()


def test_execute_refuses_a_blocking_snapshot() -> None:
    with pytest.raises(actions.SnapshotRefused, match="only incremental"):
        actions.act(SnapshotState(), execute("app.a", type="blocking"), Catalog("app.a"))


def test_execute_refuses_a_queue_too_large_for_the_offsets() -> None:
    long = TableProgress(table="app.a", condition="x" * (MAX_STATE_BYTES - 400))
    state = SnapshotState(tables=[long])
    actions.act(state, execute("app.b"), Catalog("app.a", "app.b", "app.c"))
    with pytest.raises(actions.SnapshotRefused, match=f"exceed {MAX_STATE_BYTES} bytes"):
        actions.act(state, execute("app.c"), Catalog("app.a", "app.b", "app.c"))
    assert queued(state) == ["app.a", "app.b"]


def test_stop_without_tables_ends_everything_even_the_pending_initial() -> None:
    state = SnapshotState(id="s", tables=[TableProgress(table="a.b")], initial=True)
    assert actions.act(state, StopSnapshot(), Catalog()) == "snapshot stopped for a.b"
    assert not state.active


def test_stop_drops_only_the_matching_tables() -> None:
    state = SnapshotState(tables=[TableProgress(table=t) for t in ("a.x", "a.y", "b.x")])
    signal = StopSnapshot.model_validate({"data-collections": [".*\\.x"]})
    assert actions.act(state, signal, Catalog()) == "snapshot stopped for a.x, b.x"
    assert queued(state) == ["a.y"]


@given(states)
def test_pause_then_resume_changes_only_paused(state: SnapshotState) -> None:
    before = state.to_json()
    assert actions.act(state, PauseSnapshot(), Catalog()) == "snapshot paused"
    assert state.paused
    assert actions.act(state, ResumeSnapshot(), Catalog()) == "snapshot resumed"
    assert state.to_json() == {**before, "paused": False}


@given(st.none() | st.integers(1, 100_000), st.none() | st.integers(0, 60_000))
def test_set_throttle_changes_what_it_names(size: int | None, delay: int | None) -> None:
    if size is None and delay is None:
        return
    state = SnapshotState(chunk_size=1024, chunk_delay_ms=0)
    done = actions.act(state, SetThrottle(chunk_size=size, chunk_delay_ms=delay), Catalog())
    expected = (1024 if size is None else size, 0 if delay is None else delay)
    assert (state.chunk_size, state.chunk_delay_ms) == expected
    assert done == f"snapshot throttle: chunk size {expected[0]}, delay {expected[1]} ms"


def test_log_escapes_line_breaks_and_changes_nothing() -> None:
    state = SnapshotState()
    assert actions.act(state, Log(message="a\nb\rc"), Catalog()) == "signal log: a\\nb\\rc"
    assert state == SnapshotState()


def test_initial_snapshot_is_pending_under_its_own_id() -> None:
    state = SnapshotState()
    actions.start_initial(state)
    assert state.initial and state.active and (state.id or "").startswith("initial-")


def test_a_table_snapshotted_again_or_stopped_is_failed_no_more() -> None:
    failed = [FailedTable("app.a", "error 1142 (SELECT denied), 1 try", "s", 1.0),
              FailedTable("app.b", "error 1142 (SELECT denied), 1 try", "s", 1.0),
              FailedTable("app.c", "error 1142 (SELECT denied), 1 try", "s", 1.0)]
    state = SnapshotState(failed=list(failed))
    actions.act(state, execute("app.a"), Catalog("app.a", "app.b", "app.c"))
    assert queued(state) == ["app.a"] and state.failed == failed[1:]
    actions.act(state, StopSnapshot.model_validate({"data-collections": ["app.b"]}),
                Catalog())
    assert state.failed == failed[2:]
    actions.act(state, StopSnapshot.model_validate({}), Catalog())
    assert state.failed == [] and state.saved() is None


class _ServerError(Exception):
    """A server error as the drivers raise it: the code first."""


@pytest.mark.parametrize(("code", "deferred"), [
    (2013, True), (2006, True), (1317, True), (1969, True), (3024, True), (1205, True),
    (1142, False), (1146, False), (1064, False)])
def test_an_execute_snapshot_whose_catalog_read_failed_on_the_way_is_deferred(
        code: int, deferred: bool) -> None:
    """Lost connections, killed or timed-out statements pass; a refusal does not."""
    assert actions.deferrable(execute("shop.t"), _ServerError(code, "text")) is deferred
    assert not actions.deferrable(Log(message="m"), _ServerError(code, "text"))
