"""The coordinator's offsets side: restore and save without a server."""

from __future__ import annotations

import json

import pymysql
import pytest

from connector.settings.filters import TableFilter
from connector.settings.parse import parse_config
from connector.snapshot.chunk_reader import ChunkReader
from connector.snapshot.coordinator import SnapshotCoordinator
from connector.snapshot.progress import TableProgress
from connector.snapshot.source import ChunkSource
from connector.snapshot.state import SnapshotState
from tests.unit.test_config import doc


def no_server() -> pymysql.connections.Connection:
    pytest.fail("a unit test reached for the replica")


def coordinator(**overrides: str) -> SnapshotCoordinator:
    config = parse_config(doc(**overrides))
    source = ChunkSource(no_server, TableFilter(config), config.flavour)
    reader = ChunkReader(config, wake=lambda: None)  # its process starts with a request
    return SnapshotCoordinator(config, source, reader, lambda _: None,
                               lambda *_: pytest.fail("nothing to emit"))


def test_a_state_from_debezium_takes_the_configured_throttle() -> None:
    snap = coordinator(incremental__snapshot__chunk__size="77",
                       incremental__snapshot__chunk__delay__ms="5")
    snap.restore(SnapshotState(id="dbz", tables=[TableProgress(table="a.b")]))
    assert (snap.state.chunk_size, snap.state.chunk_delay_ms) == (77, 5)
    saved = snap.saved()
    assert saved is not None and saved.to_json()["chunk_size"] == 77


def test_restore_does_not_share_progress_with_the_committed_value() -> None:
    committed = SnapshotState(id="s", tables=[TableProgress(table="a.b", rows=3)],
                              chunk_size=10, chunk_delay_ms=0)
    before = json.dumps(committed.to_json())
    snap = coordinator()
    snap.restore(committed)
    snap.state.tables[0].rows = 500
    snap.state.tables.pop()
    assert json.dumps(committed.to_json()) == before


def test_nothing_is_saved_while_no_snapshot_runs() -> None:
    snap = coordinator()
    assert snap.saved() is None and not snap.wants_cpu()
    snap.start_initial()
    assert snap.saved() is not None and snap.wants_cpu()
