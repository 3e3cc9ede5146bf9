"""The source channel's reading of signal-table rows (signals/source.py): Debezium's three
columns by position, bad rows one line each, Debezium's watermark rows ignored, and the
in-progress mark of a row the last runs died acting on."""

from __future__ import annotations

import dataclasses
import json
import logging
import socket
import subprocess

import pytest

from connector.leadership.lease import Instance
from connector.offsets.mark import SourceMark
from connector.offsets.signal_mark import act_on_source_signals, source_attempts_that_died
from connector.offsets.value import ConnectorOffsets
from connector.snapshot.actions import ActionDeferred
from signals.channel import ReceivedSignal
from signals.models import MAX_VALUE_BYTES, ExecuteSnapshot, Log, SignalRejected, StopSnapshot
from signals.source import SourceSignalRow, SourceSignals, signal_from_row
from tests.unit.test_signal_mark import FakeOffsets

TABLE = "shop.debezium_signal"
EXECUTE = json.dumps({"data-collections": ["shop.orders"], "type": "incremental"})


def test_the_first_three_columns_are_id_type_and_data_whatever_their_names() -> None:
    signal = signal_from_row(("ad-hoc-1", "execute-snapshot", EXECUTE))
    assert isinstance(signal, ExecuteSnapshot)
    assert (signal.id, signal.data_collections, signal.snapshot_type) == (
        "ad-hoc-1", ["shop.orders"], "incremental")
    assert isinstance(signal_from_row((b"x", b"log", b'{"message": "hi"}', "more")), Log)


@pytest.mark.parametrize("data", [None, "", "  ", "{}"])
def test_stop_snapshot_needs_no_data(data: str | None) -> None:
    signal = signal_from_row(("s-1", "stop-snapshot", data))
    assert isinstance(signal, StopSnapshot) and signal.data_collections == []


@pytest.mark.parametrize(("values", "reason"), [
    (("b-1", "execute-snapshot", "{not json"), ("data is not JSON (Expecting property name "
                                               "enclosed in double quotes: line 1 column 2 "
                                               "(char 1))")),
    (("b-2", "execute-snapshot", '["shop.orders"]'), "data is not a JSON object (got list)"),
    (("b-3", "execute-snapshot", None), "execute-snapshot: data must be a JSON object"),
    (("b-4", "explode", "{}"), ("unknown type 'explode' (known: execute-snapshot, "
                               "stop-snapshot, pause-snapshot, resume-snapshot, log, "
                               "set-throttle)")),
    (("b-5", None, "{}"), 'missing type (a string such as "execute-snapshot")'),
    (("b-6", "log"), "the signal table has 2 column(s); Debezium's has three: id, type, data"),
    (("b-7", "log", "[" * 17 + "]" * 17), "data is nested deeper than 16 levels"),
    (("b-8", "log", '{"message": "' + "x" * MAX_VALUE_BYTES + '"}'),
     f"data is {MAX_VALUE_BYTES + 15} bytes, more than {MAX_VALUE_BYTES}"),
])
def test_a_bad_row_is_rejected_with_its_reason(values: tuple[str | None, ...],
                                               reason: str) -> None:
    with pytest.raises(SignalRejected) as err:
        signal_from_row(values)
    assert err.value.reason == reason


def test_debeziums_own_watermark_rows_are_not_signals() -> None:
    assert signal_from_row(("w-1", "snapshot-window-open", '{"openWindowTimestamp": 1}')) is None
    assert signal_from_row(("w-2", "SNAPSHOT-WINDOW-CLOSE", None)) is None


def row(values: tuple[str | None, ...], index: int = 0, gtid: str = "0-1-7") -> SourceSignalRow:
    return SourceSignalRow(gtid, index, values)


def test_the_reader_watches_only_its_table_and_logs_a_bad_row_once(
        caplog: pytest.LogCaptureFixture) -> None:
    reader = SourceSignals(TABLE)
    assert reader.watches("shop", "debezium_signal")
    assert not reader.watches("shop", "orders") and not reader.watches("shop2", "debezium_signal")
    assert not SourceSignals(None).enabled and not SourceSignals(None).watches("shop", "x")
    with caplog.at_level(logging.INFO, logger="signals.source"):
        bad = reader.read(row(("b", "explode", "{}"), 1))
        good = reader.read(row(("g", "log", '{"message": "hi"}'), 2))
    assert bad.signal is None and isinstance(good.signal, Log)
    assert good.where == f"signal from {TABLE} (GTID 0-1-7, row 2, id 'g')"
    assert [r.getMessage() for r in caplog.records] == [
        (f"signal from {TABLE} (GTID 0-1-7, row 1, id 'b') skipped: unknown type 'explode' (known: "
        "execute-snapshot, stop-snapshot, pause-snapshot, resume-snapshot, log, set-throttle)")]


def test_a_row_the_last_runs_died_on_is_acted_on_again_then_skipped_after_three(
        caplog: pytest.LogCaptureFixture) -> None:
    signal_row = row(("k", "log", '{"message": "again"}'), 0, "uuid:5")
    reader = SourceSignals(TABLE)
    reader.open(SourceMark("uuid:5", 0, 1))
    assert reader.acts_on(signal_row) and reader.mark_for(signal_row) == SourceMark("uuid:5", 0, 2)
    assert reader.mark_for(row(("k", "log", "{}"), 1, "uuid:5")) == SourceMark("uuid:5", 1, 1)
    with caplog.at_level(logging.WARNING, logger="signals.source"):
        assert isinstance(reader.read(signal_row).signal, Log)
    assert reader.unfinished is None  # passed: the records drop the mark
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "acting on it again, attempt 2 of 3" in warnings[0]
    reader.open(SourceMark("uuid:5", 0, 3))
    assert not reader.acts_on(signal_row)
    skipped = reader.read(signal_row)
    assert skipped.signal is None and "the last 3 runs each ended while acting on it" in str(
        skipped.reason)


def test_the_mark_travels_in_the_offsets_record_as_flat_fields() -> None:
    record = ConnectorOffsets(gtids="0-1-6", source_signal_in_progress=SourceMark("0-1-7", 2, 2))
    data = record.to_json()
    assert (data["signal_source_gtid"], data["signal_source_row"],
            data["signal_source_attempt"]) == ("0-1-7", 2, 2)
    assert ConnectorOffsets.from_json(data) == record
    assert "signal_source_gtid" not in ConnectorOffsets().to_json()
    assert ConnectorOffsets.from_json(ConnectorOffsets().to_json()).source_signal_in_progress \
        is None


def test_each_row_is_acted_on_inside_an_acknowledged_mark_then_unmarked() -> None:
    start = ConnectorOffsets(gtids="0-1-6", signal_offset=3)
    offsets = FakeOffsets(start)
    reader = SourceSignals(TABLE)
    reader.open(None)
    marks: list[SourceMark | None] = []
    rows = [row(("a", "log", '{"message": "a"}'), 0), row(("b", "log", '{"message": "b"}'), 1)]
    assert act_on_source_signals(rows, reader, offsets,  # type: ignore[arg-type]
                                 lambda r: marks.append(offsets.topic[-1].source_signal_in_progress),
                                 lambda delay: True)
    assert marks == [SourceMark("0-1-7", 0), SourceMark("0-1-7", 1)]
    # Only that field changes: the position stays before the signal's transaction.
    assert offsets.topic[1:] == [
        ConnectorOffsets(gtids="0-1-6", signal_offset=3,
                         source_signal_in_progress=SourceMark("0-1-7", 0)), start,
        ConnectorOffsets(gtids="0-1-6", signal_offset=3,
                         source_signal_in_progress=SourceMark("0-1-7", 1)), start]


def test_a_deferred_row_is_acted_on_again_after_a_doubling_backoff_or_left_when_stopping(
        caplog: pytest.LogCaptureFixture) -> None:
    offsets = FakeOffsets(ConnectorOffsets(gtids="0-1-6"))
    reader = SourceSignals(TABLE)
    tries: list[ReceivedSignal] = []

    def act(received: ReceivedSignal) -> None:
        tries.append(received)
        if len(tries) < 3:
            raise ActionDeferred(f"{received.where}: the replica refused a query (error 2013)")
    waited: list[float] = []
    signal_row = row(("x", "execute-snapshot", EXECUTE))
    with caplog.at_level(logging.WARNING, logger="connector.offsets.signal_mark"):
        assert act_on_source_signals([signal_row], reader, offsets,  # type: ignore[arg-type]
                                     act, lambda delay: waited.append(delay) or True)
    assert (len(tries), waited) == (3, [1.0, 2.0])
    assert caplog.records[0].getMessage() == (
        f"signal from {TABLE} (GTID 0-1-7, row 0, id 'x'): the replica refused a query (error "
        "2013); not acted on yet, trying again in 1s (the stream waits at its transaction)")
    assert offsets.topic[-1].source_signal_in_progress is None
    tries.clear()
    assert not act_on_source_signals([signal_row], reader, offsets,  # type: ignore[arg-type]
                                     act, lambda delay: False)
    assert len(tries) == 1 and offsets.topic[-1].source_signal_in_progress is None


def test_a_row_mark_whose_writer_still_runs_here_lost_its_lease_and_is_not_counted() -> None:
    alive = subprocess.Popen(["sleep", "30"])
    try:
        stored = ConnectorOffsets(source_signal_in_progress=SourceMark("0-1-7", 0, 2),
                                  writer=Instance(socket.gethostname(), alive.pid, 1.0))
        assert source_attempts_that_died(stored) == SourceMark("0-1-7", 0, 1)
        first = dataclasses.replace(stored, source_signal_in_progress=SourceMark("0-1-7", 0))
        assert source_attempts_that_died(first) is None
    finally:
        alive.kill()
        alive.wait()
    assert source_attempts_that_died(stored) == SourceMark("0-1-7", 0, 2)  # it died
