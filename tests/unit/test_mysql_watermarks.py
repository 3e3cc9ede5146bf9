"""ChunkWindow with MySQL GTID-set watermarks, on recorded event sequences.

Each case is what a MySQL replica would show: Executed_Gtid_Set before and after the chunk
SELECT as SHOW MASTER STATUS prints it (multi-line, several UUIDs), then the binlog events
(gtid, table, key) the stream delivers, with the transaction ends.
"""

from __future__ import annotations

from typing import Any

import pytest

from connector.gtid import GtidSet, MariaDbGtidPos, MariaGtid, MysqlGtid
from connector.snapshot.window import ChunkWindow, Key, RecentChanges, WindowClosedError

SRC = "2174b383-5441-11e8-b90a-c80aa9429562"  # the primary
OLD = "024da167-0c0c-11e8-8442-00059a3c7b00"  # a former primary
ADM = "3e11fa47-71ca-11e1-9e33-c80aa9429562"  # tagged admin work

BEFORE = f"""{OLD}:1-19,
{SRC.upper()}:1-100,
{ADM}:1-4:dba:1-2"""
AFTER = f"""{OLD}:1-19,
{SRC.upper()}:1-103,
{ADM}:1-4:dba:1-3"""

Event = tuple[str, str, Key]  # (gtid, table, key)
END = "END"


def chunk(*keys: int) -> dict[Key, dict[str, Any]]:
    return {(k,): {"id": k, "v": f"v{k}"} for k in keys}


def run(window: ChunkWindow, start: GtidSet, events: list[Event | str],
        ) -> tuple[list[Any], GtidSet]:
    """Feed events; after each transaction end, close the window if ready.

    Returns the output (("event", gtid, table, key) and ("r", row) items) and the position.
    """
    out: list[Any] = []
    processed = start
    current: str | None = None
    if window.ready(processed):
        out += [("r", row) for row in window.close()]
    for item in events:
        if item == END:
            assert current is not None
            processed = processed.add(current)
            current = None
            if window.is_open and window.ready(processed):
                out += [("r", row) for row in window.close()]
            continue
        assert not isinstance(item, str)
        gtid, table, key = item
        current = gtid
        out.append(("event", gtid, table, key))
        if window.is_open:
            window.on_row_change(table, gtid, key)
    return out, processed


def test_multi_row_transaction_keeps_the_window_open_until_its_end() -> None:
    low, high = GtidSet.parse(BEFORE), GtidSet.parse(AFTER)
    w = ChunkWindow("shop.orders", chunk(1, 2, 3, 4), low, high)
    events: list[Event | str] = [
        (f"{SRC}:101", "shop.orders", (2,)), END,
        (f"{SRC}:102", "shop.items", (3,)), END,       # another table: no drop
        (f"{ADM}:dba:3", "shop.orders", (9,)), END,    # a key outside the chunk
        (f"{SRC}:103", "shop.orders", (1,)),           # H's last transaction, first row ...
        (f"{SRC}:103", "shop.orders", (4,)), END,      # ... and its last row
        (f"{SRC}:104", "shop.orders", (3,)), END,      # after H: after the rows
    ]
    out, _ = run(w, low, events)
    r_at = [i for i, o in enumerate(out) if o[0] == "r"]
    assert [out[i][1]["id"] for i in r_at] == [3]
    assert r_at == [5]  # after every event of SRC:103, before SRC:104
    assert w.dropped == 3 and not w.is_open


def test_events_inside_low_watermark_pass_without_dropping() -> None:
    """The stream lags: events the SELECT already saw (in L) must not drop rows."""
    start = GtidSet.parse(f"{OLD}:1-19,{SRC}:1-98,{ADM}:1-4:dba:1-2")
    low, high = GtidSet.parse(BEFORE), GtidSet.parse(AFTER)
    w = ChunkWindow("shop.orders", chunk(1, 2), low, high)
    assert not w.safe_to_open(GtidSet.parse(AFTER)) and w.safe_to_open(start)
    events: list[Event | str] = [
        (f"{SRC}:99", "shop.orders", (1,)), END,
        (f"{SRC}:100", "shop.orders", (2,)), END,
        (f"{SRC}:101", "shop.x", (1,)), END, (f"{SRC}:102", "shop.x", (1,)), END,
        (f"{SRC}:103", "shop.x", (1,)), END,
        (f"{ADM}:dba:3", "shop.x", (1,)), END,
    ]
    out, _ = run(w, start, events)
    assert [o[1]["id"] for o in out if o[0] == "r"] == [1, 2]
    assert out[-1][0] == "r" and w.dropped == 0


def test_empty_high_difference_closes_at_once() -> None:
    """Nothing committed during the SELECT (Shopify's empty H - L): no wait, no dedup."""
    low = GtidSet.parse(BEFORE)
    w = ChunkWindow("shop.orders", chunk(5, 6), low, GtidSet.parse(BEFORE))
    out, _ = run(w, low, [])
    assert [o[1]["id"] for o in out] == [5, 6]


def test_idle_database_needs_no_heartbeat() -> None:
    """The window closes at the end of the last transaction in H, not at a later event."""
    low, high = GtidSet.parse(BEFORE), GtidSet.parse(AFTER)
    w = ChunkWindow("shop.orders", chunk(7), low, high)
    events: list[Event | str] = [(f"{SRC}:101", "s.t", (0,)), END,
                                 (f"{SRC}:102", "s.t", (0,)), END,
                                 (f"{ADM}:dba:3", "s.t", (0,)), END,
                                 (f"{SRC}:103", "s.t", (0,)), END]
    out, _ = run(w, low, events)
    assert out[-1] == ("r", {"id": 7, "v": "v7"})


def test_gap_in_source_is_filled_later() -> None:
    """Multi-source replicas can apply a lower GTID later: sets, not last-seen numbers."""
    low = GtidSet.parse(f"{SRC}:1-10:12-20")
    high = GtidSet.parse(f"{SRC}:1-22")
    w = ChunkWindow("d.t", chunk(1, 2, 3), low, high)
    events: list[Event | str] = [
        (f"{SRC}:21", "d.t", (1,)), END,
        (f"{SRC}:15", "d.t", (2,)), END,  # in L: the SELECT saw it
        (f"{SRC}:22", "d.t", (9,)), END,
    ]
    out, processed = run(w, GtidSet.parse(f"{SRC}:1-10:12-14:16-20"), events)
    assert w.is_open and processed.contains(f"{SRC}:22")
    assert not any(o[0] == "r" for o in out)  # still waits for SRC:11
    w2 = ChunkWindow("d.t", chunk(1, 2, 3), low, high)
    out, _ = run(w2, GtidSet.parse(f"{SRC}:1-10:12-14:16-20"),
                 [*events, (f"{SRC}:11", "d.t", (3,)), END])
    assert [o[1]["id"] for o in out if o[0] == "r"] == [2]


def test_window_lifecycle() -> None:
    low = GtidSet.parse(BEFORE)
    w = ChunkWindow("d.t", chunk(3, 1, 2), low, low)
    w.on_row_change("d.t", f"{SRC}:101", (1,))
    w.on_row_change("d.t", f"{SRC}:101", (1,))  # same key twice: dropped once
    assert w.dropped == 1 and w.pending == 2
    assert [r["id"] for r in w.close()] == [3, 2]  # the SELECT's order is kept
    with pytest.raises(WindowClosedError):
        w.on_row_change("d.t", f"{SRC}:102", (3,))
    with pytest.raises(WindowClosedError):
        w.ready(low)
    with pytest.raises(WindowClosedError):
        w.close()


def test_ddl_discards_only_its_table() -> None:
    low = GtidSet.parse(BEFORE)
    w = ChunkWindow("d.t", chunk(1), low, low)
    assert w.on_ddl("d.other") is False and w.is_open
    assert w.on_ddl("d.t") is True and not w.is_open and w.pending == 0
    with pytest.raises(WindowClosedError):
        w.close()
    w2 = ChunkWindow("d.t", chunk(1), low, low)
    w2.discard()
    assert "discarded" in repr(w2)


def test_update_passes_both_keys() -> None:
    low = GtidSet.parse(BEFORE)
    w = ChunkWindow("d.t", chunk(1, 2, 3), low, GtidSet.parse(AFTER))
    w.on_row_changes("d.t", f"{SRC}:101", [(1,), (3,)])  # primary key 1 changed to 3
    assert [r["id"] for r in w.close()] == [2]


def test_recent_changes_repair_a_low_watermark_behind_the_stream() -> None:
    start = GtidSet.parse(f"{SRC}:1-97")
    recent = RecentChanges(start, None, max_rows=10)
    processed = start
    for n, key in ((98, 1), (99, 2), (100, 3), (101, 4)):
        recent.record("d.t", f"{SRC}:{n}", (key,))
        recent.record("d.u", f"{SRC}:{n}", (5,))
        processed = processed.add(f"{SRC}:{n}")
        recent.end_transaction(processed)
    # L read after the pause, but behind the stream: SRC:100-101 already went out.
    w = ChunkWindow("d.t", chunk(1, 2, 3, 4, 5), GtidSet.parse(f"{SRC}:1-99"), processed)
    assert not w.safe_to_open(processed)
    assert recent.replay_into(w, processed)
    assert [r["id"] for r in w.close()] == [1, 2, 5]
    # History too short to reach back to L: the caller must SELECT again.
    short = RecentChanges(start, None, max_rows=2)
    for n in (98, 99, 100):
        short.record("d.t", f"{SRC}:{n}", (n,))
        short.end_transaction(GtidSet.parse(f"{SRC}:1-{n}"))
    assert short.retained_rows == 2
    w = ChunkWindow("d.t", chunk(1), GtidSet.parse(f"{SRC}:1-97"), processed)
    assert not short.replay_into(w, processed)
    w = ChunkWindow("d.t", chunk(1), GtidSet.parse(f"{SRC}:1-98"), processed)
    assert short.replay_into(w, processed)


def test_positions_do_not_mix_flavours() -> None:
    w = ChunkWindow("d.t", chunk(1), MariaDbGtidPos.parse("0-1-5"), MariaDbGtidPos.parse("0-1-5"))
    with pytest.raises(TypeError):
        w.on_row_change("d.t", MysqlGtid.parse(f"{SRC}:1"), (1,))
    with pytest.raises(ValueError):
        w.on_row_change("d.t", f"{SRC}:1", (1,))
    with pytest.raises(TypeError):
        w.ready(GtidSet.parse(BEFORE))
    w.on_row_change("d.t", MariaGtid(0, 1, 6), (1,))
    assert w.dropped == 1


def test_key_type_mismatch_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    low = GtidSet.parse(BEFORE)
    w = ChunkWindow("d.t", {(b"k1",): {"id": b"k1"}}, low, GtidSet.parse(AFTER))
    with caplog.at_level("WARNING", logger="gtidmark.snapshot"):
        w.on_row_change("d.t", f"{SRC}:101", ("k1",))
        w.on_row_change("d.t", f"{SRC}:101", ("k2",))
    assert len(caplog.records) == 1 and "never match" in caplog.records[0].getMessage()
    w2 = ChunkWindow("d.t", chunk(1), low, GtidSet.parse(AFTER))
    with caplog.at_level("WARNING", logger="gtidmark.snapshot"):
        w2.on_row_change("d.t", f"{SRC}:101", (1,))
    assert len(caplog.records) == 1 and w2.dropped == 1


def test_recent_changes_keep_no_part_of_a_transaction_larger_than_their_bound() -> None:
    start = GtidSet.parse(f"{SRC}:1-97")
    recent = RecentChanges(start, None, max_rows=2)
    for key in (1, 2, 3):  # pieces of SRC:98 already emitted, its end not yet read
        recent.record("d.t", f"{SRC}:98", (key,))
    w = ChunkWindow("d.t", chunk(1, 2, 3, 4), start, start)
    assert not recent.replay_into(w, start)  # key 3 cannot be replayed: SELECT again
    again = ChunkWindow("d.t", chunk(1, 2, 3, 4), GtidSet.parse(f"{SRC}:1-98"), start)
    assert recent.replay_into(again, start)  # a SELECT that saw SRC:98 needs no replay
    processed = GtidSet.parse(f"{SRC}:1-98")
    recent.end_transaction(processed)
    assert recent.retained_rows == 0
    assert not recent.replay_into(ChunkWindow("d.t", chunk(1), start, processed), processed)
    w = ChunkWindow("d.t", chunk(1, 2), processed, processed)
    assert recent.replay_into(w, processed) and [r["id"] for r in w.close()] == [1, 2]
