"""The snapshot state in the offsets: its JSON is the one earlier versions wrote and read."""

from __future__ import annotations

import json

from hypothesis import given

from connector.offsets.store import parse_offsets
from connector.offsets.value import SNAPSHOT_KEY, ConnectorOffsets
from connector.snapshot.progress import TableProgress
from connector.snapshot.state import SnapshotState
from tests.unit.snapshot_strategies import states

# An offsets record as the untyped coordinator state wrote it, byte for byte.
WRITTEN_BEFORE = (
    b'{"gtids":"0-1-42","file":"mariadb-bin.000003","pos":1234,"event":0,"row":0,'
    b'"server_id":1,"ts_sec":1700000000,"snapshot":{"id":"s-1","paused":true,'
    b'"chunk_size":500,"chunk_delay_ms":100,"initial":false,"tables":[{"table":"app.t",'
    b'"condition":"id > 3","surrogate_key":null,"last_key":[{"decimal":"5.50"},"x"],'
    b'"max_key":[{"decimal":"9.00"},"z"],"rows":5,"estimate":10,"started":1700000000.125},'
    b'{"table":"app.u","condition":null,"surrogate_key":"k","last_key":null,"max_key":null,'
    b'"rows":0,"estimate":0,"started":1700000001.5}]},"signal_offset":7,"epoch":2,'
    b'"writer":null}')


@given(states)
def test_state_round_trips_through_json(state: SnapshotState) -> None:
    assert SnapshotState.from_json(json.loads(json.dumps(state.to_json()))) == state


def test_an_offsets_record_written_before_is_read_and_its_state_kept() -> None:
    offsets = parse_offsets(WRITTEN_BEFORE)
    assert offsets.snapshot is not None
    assert [t.table for t in offsets.snapshot.tables] == ["app.t", "app.u"]
    assert offsets.snapshot.paused and offsets.snapshot.chunk_size == 500
    # Written back in today's shape (the state as a JSON string), the same state.
    rewritten = json.loads(offsets.to_bytes())
    before = json.loads(WRITTEN_BEFORE)
    assert json.loads(rewritten.pop(SNAPSHOT_KEY)) == before.pop("snapshot")
    assert {k: v for k, v in rewritten.items() if not k.startswith("writer")} == \
        {k: v for k, v in before.items() if k != "writer"}
    assert parse_offsets(offsets.to_bytes()) == offsets


def test_a_state_without_throttle_takes_the_configured_one() -> None:
    assert SnapshotState(id="d").throttle((1024, 0)) == (1024, 0)
    assert SnapshotState(chunk_size=10, chunk_delay_ms=0).throttle((1024, 50)) == (10, 0)
    assert "chunk_size" not in SnapshotState(id="d").to_json()


def test_no_snapshot_saves_nothing() -> None:
    assert SnapshotState(id="x", chunk_size=5).saved() is None
    assert SnapshotState(initial=True).saved() == SnapshotState(initial=True)


def test_a_saved_state_does_not_change_with_later_chunks() -> None:
    state = SnapshotState(id="s", tables=[TableProgress(table="a.b", rows=1)])
    saved = state.saved()
    state.tables[0].rows = 99
    state.tables.append(TableProgress(table="a.c"))
    assert saved is not None and [(t.table, t.rows) for t in saved.tables] == [("a.b", 1)]


def test_a_running_snapshot_leaves_debeziums_snapshot_key_alone() -> None:
    """Debezium reads `snapshot` as a SnapshotType name (INITIAL, BLOCKING, or a boolean)
    and its task fails on any other string: resuming from our offsets mid-snapshot, it
    stopped with IllegalArgumentException (tests/integration/test_migration_procedure.py)."""
    running = ConnectorOffsets(gtids="0-1-42", snapshot=SnapshotState(
        id="s-1", tables=[TableProgress(table="app.t", started=1700000000.125)]), signal_offset=3)
    written = json.loads(running.to_bytes())
    assert "snapshot" not in written
    assert json.loads(written[SNAPSHOT_KEY])["tables"][0]["table"] == "app.t"
    assert parse_offsets(running.to_bytes()) == running


def test_the_state_where_earlier_versions_kept_it_is_read() -> None:
    running = ConnectorOffsets(gtids="0-1-42", snapshot=SnapshotState(
        id="s-1", tables=[TableProgress(table="app.t", started=1700000000.125)]), signal_offset=3)
    earlier = json.loads(running.to_bytes())
    earlier["snapshot"] = earlier.pop(SNAPSHOT_KEY)
    assert parse_offsets(json.dumps(earlier).encode()) == running
