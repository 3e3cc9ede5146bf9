"""Resuming inside a transaction from Debezium's `event`/`row` offsets, against a model of
how Debezium's BinlogOffsetContext counts them (BEGIN first, every event, rows in the event
in progress)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from connector.binlog.resume_skip import MidTransaction

# One transaction after its BEGIN: ("map",), ("annotate",) or ("rows", n) events.
Event = tuple[str, int]
events = st.lists(st.one_of(st.just(("map", 0)), st.just(("annotate", 0)),
                            st.tuples(st.just("rows"), st.integers(1, 4))),
                  min_size=1, max_size=12)


def debezium_offsets(tx: list[Event]) -> list[tuple[int, int, int]]:
    """(event, row, row id) of every change record Debezium sends for `tx`, the offsets as
    BinlogOffsetContext writes them with it; row ids count the transaction's rows."""
    out: list[tuple[int, int, int]] = []
    completed = 1  # the BEGIN, completed
    row_id = 0
    for kind, n in tx:
        if kind == "rows":
            for i in range(n):
                out.append((completed, i + 1 if i < n - 1 else n, row_id))
                row_id += 1
        completed += 1  # completeEvent() after the event's handler
    return out


def resumed(tx: list[Event], event: int, row: int) -> list[int]:
    """The row ids our reader sends, resuming with `event`/`row`: a server's replay."""
    skip = MidTransaction(event, row)
    skip.reconnected()
    sent: list[int] = []
    row_id = 0
    skip.begin()
    for kind, n in tx:
        skip.next_event()
        if kind == "rows":
            dropped = skip.rows_to_drop(n)
            sent += list(range(row_id + dropped, row_id + n))
            row_id += n
    skip.end()
    return sent


@given(events, st.data())
def test_nothing_sent_before_a_debezium_record_is_sent_again(tx: list[Event],
                                                           data: st.DataObject) -> None:
    records = debezium_offsets(tx)
    total = sum(n for kind, n in tx if kind == "rows")
    if not records:
        assert resumed(tx, 1, 0) == []
        return
    event, row, last = data.draw(st.sampled_from(records))
    assert resumed(tx, event, row) == list(range(last + 1, total))


def test_later_transactions_stream_whole() -> None:
    skip = MidTransaction(3, 1)
    skip.begin()
    for _ in range(3):
        skip.next_event()
    assert skip.rows_to_drop(5) == 1
    skip.end()
    assert not skip.pending
    skip.begin()
    skip.next_event()
    assert skip.rows_to_drop(4) == 0


def test_no_offsets_inside_a_transaction_skip_nothing() -> None:
    skip = MidTransaction(0, 0)
    skip.begin()
    skip.next_event()
    assert not skip.pending and skip.rows_to_drop(3) == 0


def test_a_statement_before_the_first_begin_is_not_counted() -> None:
    """MySQL: a DDL (no BEGIN) first; Debezium's skipping starts at the first BEGIN."""
    skip = MidTransaction(2, 1)
    skip.next_event()
    skip.end()
    assert skip.pending
    skip.begin()
    skip.next_event()  # table map
    skip.next_event()  # rows, event 2
    assert skip.rows_to_drop(3) == 1
