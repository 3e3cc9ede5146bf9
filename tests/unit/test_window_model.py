"""Model test of the DBLog window: random histories, watermarks and chunk SELECT points.

A table starts with rows the stream never shows (they predate the connector), then a history
of transactions (1..3 writes each, on the chunked table or another one; the stream may
stop between two writes of one, as it does between the pieces of a large transaction).
Chunks are SELECTed at random points of the history, L at or before the SELECT point (it may lag, even behind
the stream), H at or after it. The stream replays the history through the windows.
Asserted: every `r` row equals its key's state when emitted (no stale row overrides a newer
change), and applying the whole output in order gives the final table state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from connector.gtid import GtidSet, MariaDbGtidPos, MariaGtid, MysqlGtid
from connector.snapshot.window import ChunkWindow, Key, RecentChanges

CHUNKED, OTHER = "db.a", "db.b"
KEYS = 12
UUIDS = ("3e11fa47-71ca-11e1-9e33-c80aa9429562", "2174b383-5441-11e8-b90a-c80aa9429562",
         "024da167-0c0c-11e8-8442-00059a3c7b00")
TSIDS = [(u, t) for u in UUIDS for t in ("", "tg")]

State = dict[int, int]


@dataclass
class Tx:
    table: str
    writes: list[tuple[int, int | None]]  # (key, value after; None: deleted)
    gtid: MariaGtid | MysqlGtid


@dataclass
class History:
    initial: dict[str, State]
    txs: list[Tx]
    positions: list[Any]  # positions[j]: after the first j transactions
    states: list[State]  # the chunked table after the first j transactions


def _maria_gtids(draw: st.DrawFn, m: int) -> tuple[MariaDbGtidPos, list[MariaGtid]]:
    last = {d: draw(st.integers(0, 30)) for d in range(3)}
    base = MariaDbGtidPos(MariaGtid(d, 1, s) for d, s in last.items() if s)
    out = []
    for _ in range(m):
        d = draw(st.integers(0, 2))
        last[d] += 1
        out.append(MariaGtid(d, draw(st.integers(1, 2)), last[d]))
    return base, out


def _mysql_gtids(draw: st.DrawFn, m: int) -> tuple[GtidSet, list[MysqlGtid]]:
    used: dict[tuple[str, str], set[int]] = {}
    for tsid in TSIDS:
        nums = set(range(1, draw(st.integers(0, 4)) + 1))
        if draw(st.booleans()):
            nums.add(max(nums, default=0) + 2)  # a gap a later transaction may fill
        used[tsid] = nums
    base = GtidSet.of(MysqlGtid(u, t, n) for (u, t), ns in used.items() for n in ns)
    out = []
    for _ in range(m):
        tsid = draw(st.sampled_from(TSIDS))
        nums = used[tsid]
        top = max(nums, default=0)
        gaps = [n for n in range(1, top) if n not in nums]
        seq = draw(st.sampled_from([top + 1, top + 2, *gaps[:2]]))
        nums.add(seq)
        out.append(MysqlGtid(*tsid, seq))
    return base, out


@st.composite
def histories(draw: st.DrawFn) -> History:
    values = iter(range(1, 10**6))
    initial = {t: {k: -k - 1 for k in range(KEYS) if draw(st.booleans())}
               for t in (CHUNKED, OTHER)}
    m = draw(st.integers(0, 24))
    base: Any
    gtids: list[Any]
    if draw(st.booleans()):
        base, gtids = _maria_gtids(draw, m)
        step: Any = MariaDbGtidPos.advance
    else:
        base, gtids = _mysql_gtids(draw, m)
        step = GtidSet.add
    live = {t: dict(rows) for t, rows in initial.items()}
    txs, positions, states = [], [base], [dict(live[CHUNKED])]
    for gtid in gtids:
        table = draw(st.sampled_from([CHUNKED, CHUNKED, OTHER]))
        writes: list[tuple[int, int | None]] = []
        for _ in range(draw(st.integers(1, 3))):
            key = draw(st.integers(0, KEYS - 1))
            if draw(st.integers(0, 3)) == 0:
                if key in live[table]:
                    del live[table][key]
                    writes.append((key, None))
            else:
                live[table][key] = next(values)
                writes.append((key, live[table][key]))
        txs.append(Tx(table, writes, gtid))
        positions.append(step(positions[-1], gtid))
        states.append(dict(live[CHUNKED]))
    return History(initial, txs, positions, states)


def select_chunk(state: State, after: int | None, limit: int) -> dict[Key, dict[str, Any]]:
    keys = sorted(k for k in state if after is None or k > after)[:limit]
    return {(k,): {"id": k, "v": state[k]} for k in keys}


class Driver:
    """The connector's single stream thread, reduced to what the window needs.

    A transaction may be emitted in pieces (a large one is): the stream can stop after any
    of its writes, and the position moves only at its end.
    """

    def __init__(self, history: History, recent_rows: int) -> None:
        self.h = history
        self.cursor = 0  # transactions streamed (and emitted) so far
        self.piece = 0  # writes of transaction `cursor` emitted so far (its pieces)
        self.out: list[tuple[str, int, int | None]] = []  # (op, key, value) of the chunked table
        self.window: ChunkWindow | None = None
        self.recent_rows = recent_rows
        self.recent: RecentChanges | None = None  # kept from the first chunk request on
        self.live = dict(history.initial[CHUNKED])  # the chunked table as emitted so far

    @property
    def processed(self) -> Any:
        return self.h.positions[self.cursor]

    @property
    def reading(self) -> Any:
        """The transaction whose first pieces went out, as the coordinator hears of it."""
        return self.h.txs[self.cursor].gtid if self.piece else None

    def ask(self) -> RecentChanges:
        """A chunk is asked for: the coordinator keeps the stream's keys from now on."""
        if self.recent is None:
            self.recent = RecentChanges(self.processed, self.reading, max_rows=self.recent_rows)
        return self.recent

    def stream_write(self) -> None:
        """The next write of the transaction being read (its end after its last one)."""
        tx = self.h.txs[self.cursor]
        if self.piece < len(tx.writes):
            key, value = tx.writes[self.piece]
            if tx.table == CHUNKED:
                self.out.append(("d" if value is None else "c", key, value))
                if value is None:
                    del self.live[key]
                else:
                    self.live[key] = value
            if self.window is not None:
                self.window.on_row_change(tx.table, tx.gtid, (key,))
            if self.recent is not None:
                self.recent.record(tx.table, tx.gtid, (key,))
            self.piece += 1
        if self.piece >= len(tx.writes):
            self.cursor, self.piece = self.cursor + 1, 0
            if self.recent is not None:
                self.recent.end_transaction(self.processed)

    def stream_one(self) -> None:
        """The rest of the transaction being read (all of the next one between two)."""
        cursor = self.cursor
        while self.cursor == cursor:
            self.stream_write()

    def run_window(self, window: ChunkWindow) -> None:
        """Stream until the window is ready, then emit its rows, checking each is current."""
        self.window = window
        while not window.ready(self.processed):
            assert self.cursor < len(self.h.txs), "H is never reached"
            self.stream_one()
        self.window = None
        now = self.live  # the pieces of a transaction emitted so far included
        for row in window.close():
            assert now.get(row["id"]) == row["v"], f"stale r row {row} at {self.cursor}: {now}"
            self.out.append(("r", row["id"], row["v"]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.integers(1, 5), st.integers(0, 8), st.data())
def test_window_output_replays_to_the_final_state(history: History, limit: int,
                                                  recent_rows: int, data: st.DataObject) -> None:
    draw = data.draw
    m = len(history.txs)
    drv = Driver(history, recent_rows)
    after: int | None = None
    for _ in range(KEYS + 2):
        for _ in range(draw(st.integers(0, m - drv.cursor))):  # the stream moves on meanwhile
            drv.stream_one()
        if drv.cursor < m and not drv.piece:  # and may stop inside a transaction
            for _ in range(draw(st.integers(0, max(0, len(history.txs[drv.cursor].writes) - 1)))):
                drv.stream_write()
        event("asked between pieces of a transaction" if drv.piece else
              "asked between transactions")
        recent = drv.ask()
        c = drv.cursor
        # < c: binlog-first race; == c (often): the SELECT misses the transaction being read
        s = draw(st.just(c) | st.integers(max(0, c - 2), m), label="select point")
        lo = draw(st.just(s) | st.integers(max(0, s - 3), s), label="low")
        hi = draw(st.integers(s, min(m, s + 3)), label="high")
        rows = select_chunk(history.states[s], after, limit)
        selected = [k[0] for k in rows]  # the window owns (and empties) `rows`
        window = ChunkWindow(CHUNKED, rows, history.positions[lo], history.positions[hi])
        event("L behind the stream" if lo < c else "L at or after the stream")
        event("zero-width window" if lo == hi else "L < H")
        if not recent.replay_into(window, drv.processed):
            event("history too short: SELECT again")
            # L is behind the retained history, or lacks a transaction whose pieces went
            # out: SELECT again; L cannot be behind the stream (nor that transaction).
            assert lo < c or (drv.piece and lo == c)
            window.discard()
            first = c + 1 if drv.piece else c
            s = draw(st.integers(first, m), label="select point again")
            lo = draw(st.integers(first, s), label="low again")
            hi = draw(st.integers(s, min(m, s + 3)), label="high again")
            rows = select_chunk(history.states[s], after, limit)
            selected = [k[0] for k in rows]
            window = ChunkWindow(CHUNKED, rows, history.positions[lo], history.positions[hi])
            assert recent.replay_into(window, drv.processed)
        drv.run_window(window)
        if len(selected) < limit:
            break
        after = selected[-1]
    else:
        raise AssertionError("chunking did not finish")
    while drv.cursor < m:
        drv.stream_one()
    consumer: State = {}
    for op, key, value in drv.out:
        if value is None:
            consumer.pop(key, None)
        else:
            consumer[key] = value
    assert consumer == history.states[m]


def test_unsafe_window_is_detected_without_history() -> None:
    """L behind the stream and no retained history: the window must not be used."""
    base = MariaDbGtidPos.parse("0-1-10")
    processed = base.advance(MariaGtid(0, 1, 11))
    recent = RecentChanges(processed, None)
    window = ChunkWindow(CHUNKED, {(1,): {"id": 1, "v": 0}}, base, processed)
    assert not window.safe_to_open(processed)
    assert not recent.replay_into(window, processed)
