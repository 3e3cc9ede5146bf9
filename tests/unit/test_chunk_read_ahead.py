"""The coordinator reads one chunk ahead; a chunk whose L the stream has passed is made safe.

The chunk reader process (chunk SELECTs and a table's chunking) is replaced by a stand-in
answering as the real one does (the integration tests run the real one); the windows, the
kept keys and the coordinator are the product's.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from connector.gtid import MariaDbGtidPos, MariaGtid
from connector.schema import Column, TableSchema
from connector.settings.parse import parse_config
from connector.snapshot.coordinator import SnapshotCoordinator
from connector.snapshot.progress import TableProgress
from connector.snapshot.source import ChunkRequest, SelectedChunk
from connector.snapshot.state import SnapshotState
from connector.snapshot.table_reads import TableRead, TableRequest
from tests.unit.test_config import doc

SCHEMA = TableSchema("d", "t", (Column("id", "int", nullable=False), Column("v", "int")),
                     ("id",))


class Reader:
    """Answers only what the test hands it, in order, like the process does."""

    def __init__(self) -> None:
        self.requests: list[ChunkRequest] = []
        self.answers: deque[Any] = deque()

    def request(self, request: ChunkRequest | TableRequest) -> None:
        if isinstance(request, TableRequest):  # the table's chunking: answered at once
            bounds = ((4,), 4) if request.measure else None
            self.answers.append(TableRead(request.number, SCHEMA, ("id",), None, (), bounds))
            return
        self.requests.append(request)

    def has_answer(self) -> bool:
        return bool(self.answers)

    def answer(self) -> Any:
        return self.answers.popleft() if self.answers else None

    def close(self) -> None:
        pass


class Catalog:
    """The signals' catalog: no signal is sent here."""

    def close(self) -> None:
        pass


def pos(seq: int) -> MariaDbGtidPos:
    return MariaDbGtidPos.parse(f"0-1-{seq}")


def row(key: int, value: int) -> dict[str, Any]:
    return {"id": key, "v": value}


def chunk(request: ChunkRequest, rows: list[dict[str, Any]], at: MariaDbGtidPos,
          full: bool = True) -> SelectedChunk:
    return SelectedChunk(request.number, request.table, {(r["id"],): r for r in rows},
                         request.after, (rows[-1]["id"],), full, at, at)


def coordinator() -> tuple[SnapshotCoordinator, Reader, list[list[Any]]]:
    config = parse_config(doc(incremental__snapshot__chunk__size="2"))
    reader = Reader()
    emitted: list[list[Any]] = []
    snap = SnapshotCoordinator(config, Catalog(), reader, lambda _: None,  # type: ignore[arg-type]
                               lambda schema, rows, file, pos: emitted.append(rows))
    snap.restore(SnapshotState(id="s", tables=[TableProgress(table="d.t")]))
    return snap, reader, emitted


def first_chunk_out() -> tuple[SnapshotCoordinator, Reader, list[list[Any]]]:
    """The first chunk, read at 0-1-10, emitted; the second asked for, not answered yet."""
    snap, reader, emitted = coordinator()
    snap.step(pos(10), caught_up=True)
    reader.answers.append(chunk(reader.requests[0], [row(1, 0), row(2, 0)], pos(10)))
    snap.step(pos(10), caught_up=True)
    return snap, reader, emitted


def test_the_next_chunk_is_asked_for_when_a_window_opens() -> None:
    snap, reader, emitted = coordinator()
    snap.step(pos(10), caught_up=True)
    assert [r.after for r in reader.requests] == [None]
    reader.answers.append(chunk(reader.requests[0], [row(1, 0), row(2, 0)], pos(10)))
    snap.step(pos(10), caught_up=True)
    assert emitted == [[row(1, 0), row(2, 0)]]
    assert [r.after for r in reader.requests] == [None, (2,)]  # asked before this answer


def test_a_chunk_read_before_a_change_the_stream_emitted_drops_that_row() -> None:
    snap, reader, emitted = first_chunk_out()
    # The reader read chunk 2 at 0-1-10; the stream then emits 0-1-11, which updates key 3.
    ahead = chunk(reader.requests[1], [row(3, 0), row(4, 0)], pos(10), full=False)
    snap.on_row_change("d.t", MariaGtid(0, 1, 11), row(3, 1))
    snap.after_transaction(pos(11))
    reader.answers.append(ahead)
    snap.step(pos(11), caught_up=True)
    assert emitted[1] == [row(4, 0)]  # key 3's r row would overwrite the newer u event
    assert snap.chunks_reselected == 0 and snap.rows_dropped == 1
    assert snap.saved() is None  # the table is done


def test_a_change_the_chunk_already_holds_keeps_its_row() -> None:
    snap, reader, emitted = first_chunk_out()
    snap.on_row_change("d.t", MariaGtid(0, 1, 11), row(3, 1))
    snap.after_transaction(pos(11))
    reader.answers.append(chunk(reader.requests[1], [row(3, 1), row(4, 0)], pos(11),
                                full=False))
    snap.step(pos(11), caught_up=True)
    assert emitted[1] == [row(3, 1), row(4, 0)]


def test_a_chunk_read_ahead_before_a_ddl_is_not_used() -> None:
    snap, reader, emitted = first_chunk_out()
    snap.on_ddl("d.t", "ALTER")
    snap.after_transaction(pos(11))
    reader.answers.append(chunk(reader.requests[1], [row(3, 0), row(4, 0)], pos(10)))
    snap.step(pos(11), caught_up=True)
    assert len(emitted) == 1  # the old answer was dropped ...
    assert [r.after for r in reader.requests] == [None, (2,), (2,)]  # ... and asked again
    reader.answers.append(chunk(reader.requests[2], [row(3, 0), row(4, 0)], pos(11),
                                full=False))
    snap.step(pos(11), caught_up=True)
    assert emitted[1] == [row(3, 0), row(4, 0)]


def test_history_shorter_than_the_lag_selects_again() -> None:
    snap, reader, emitted = coordinator()
    snap.step(pos(12), caught_up=True)
    # The replica's L is behind the position the stream had when the chunk was asked for.
    reader.answers.append(chunk(reader.requests[0], [row(1, 0), row(2, 0)], pos(10)))
    snap.step(pos(12), caught_up=True)
    assert emitted == [] and snap.chunks_reselected == 1


def test_a_window_opened_between_pieces_of_a_transaction_drops_what_they_changed() -> None:
    """A large transaction streams in pieces; the position moves only at its end, so a window
    opening after a piece is 'safe' by position although that piece's rows went out."""
    snap, reader, emitted = first_chunk_out()
    # Chunk 2 was read at 0-1-10; 0-1-11's first piece (key 3) is emitted, its end not yet.
    ahead = chunk(reader.requests[1], [row(3, 0), row(4, 0)], pos(10), full=False)
    snap.on_row_change("d.t", MariaGtid(0, 1, 11), row(3, 1))
    reader.answers.append(ahead)
    snap.step(pos(10), caught_up=False)  # the engine's position: before 0-1-11
    snap.on_row_change("d.t", MariaGtid(0, 1, 11), row(2, 1))  # the next piece
    snap.after_transaction(pos(11))
    snap.step(pos(11), caught_up=True)
    assert emitted[1] == [row(4, 0)]  # key 3's r row would overwrite the piece's u event


def test_pieces_out_before_the_tables_first_request_keep_its_window_until_l_has_them() -> None:
    """A large transaction's first piece changed key 1 before the table was watched: its
    keys were never kept, so a chunk whose L lacks that transaction is selected again."""
    snap, reader, emitted = coordinator()
    big = MariaGtid(0, 1, 11)
    snap.on_row_change("d.t", big, row(1, 1))  # not watched yet: not kept
    snap.after_piece(big)
    snap.step(pos(10), caught_up=False)  # the engine's position: before 0-1-11
    reader.answers.append(chunk(reader.requests[-1], [row(1, 0), row(2, 0)], pos(10)))
    snap.step(pos(10), caught_up=False)
    assert emitted == [] and snap.chunks_reselected == 1  # key 1's r row would be stale
    snap.on_row_change("d.t", big, row(2, 1))  # the last piece
    snap.after_transaction(pos(11))
    time.sleep(0.01)  # the coordinator's pause before selecting again (1 ms)
    snap.step(pos(11), caught_up=True)
    reader.answers.append(chunk(reader.requests[-1], [row(1, 1), row(2, 1)], pos(11),
                                full=False))
    snap.step(pos(11), caught_up=True)
    assert emitted == [[row(1, 1), row(2, 1)]]
