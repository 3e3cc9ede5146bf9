"""Signals acted on between two offsets writes: marked in progress before, unmarked after.

A signal whose handling kills the process (the OOM killer, a segfault in a library) was
replayed on every start and by every HA instance: the stored signal position moves past
a signal only with a later checkpoint, which such a signal never reaches (#22). So before a
signal is read, the offsets record last written goes out again with its `SignalMark` (the
signal's offset and the attempt) and the signal is read and acted on only once Kafka has
acknowledged it; afterwards the same record goes out without the mark. A start that loads
a mark acts on that signal again as the next attempt, and skips it in one line once
`MAX_ATTEMPTS` starts each ended while acting on it (a kill or a takeover mid-action must
not drop a signal: #32). A mark whose writer still runs on this host lost its lease (it was
frozen or cut off), it did not die: that attempt is not counted.

The marked record is the last one written, changed in that field alone: its position and
snapshot state wait for no change event, and signals between its `signal_offset` and the
marked one are replayed after a crash as before (their effects were not committed). Only
records under this connector's key are marked; one mark costs one acknowledged write.

An action the replica could not serve yet (`ActionDeferred`) is not a reason to drop the
signal: the mark is lifted, and that signal and those after it are read again after a
backoff, in order. A row of the signal table (the source channel) is marked the same way;
one the replica could not serve yet holds the stream at its transaction, acted on again
after each backoff (the offsets stay before that transaction meanwhile).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
import time
from collections.abc import Callable

from connector.offsets.mark import SignalMark, SourceMark
from connector.offsets.store import OffsetStore
from connector.offsets.value import ConnectorOffsets
from connector.snapshot.actions import ActionDeferred
from signals.channel import RETRY_FIRST_S, RETRY_MAX_S, ReceivedSignal, SignalChannel
from signals.source import SourceSignalRow, SourceSignals

log = logging.getLogger(__name__)

WAIT_WARNING_S = 5.0  # Kafka Connect's offset.flush.timeout.ms default, as the commit stall


def act_on_signals(channel: SignalChannel, offsets: OffsetStore,
                   act: Callable[[ReceivedSignal], None]) -> None:
    """Read and act on the signals that arrived, each inside its in-progress mark."""
    records = channel.fetch(0)
    last = offsets.committed  # written and never None while the engine runs
    marked = False
    for i, record in enumerate(records):
        if last is not None and channel.acts_on(record):
            mark = dataclasses.replace(last, signal_in_progress=channel.mark_for(record))
            if not write_acknowledged(offsets, mark, f"signal at offset {record.offset}"):
                return  # the store failed: its next commit raises and the engine stops
            marked = True
        try:
            act(channel.read(record))
        except ActionDeferred as exc:
            delay = channel.put_back(records[i:])
            log.warning("%s; not acted on yet, trying again in %.0fs (the signals after it "
                        "wait)", exc, delay)
            break
    if marked and last is not None:
        write_acknowledged(offsets, last, "the end of a signal's in-progress mark")


def act_on_source_signals(rows: list[SourceSignalRow], reader: SourceSignals,
                          offsets: OffsetStore, act: Callable[[ReceivedSignal], None],
                          wait: Callable[[float], bool]) -> bool:
    """Read and act on the signal table's rows of one transaction, in order, each inside
    its in-progress mark; the caller passes the transaction only afterwards. False when
    `wait` (a deferred action's backoff) says the connector is stopping."""
    for row in rows:
        retries = 0
        while True:
            last = offsets.committed
            marked = last is not None and reader.acts_on(row)
            if marked and last is not None:
                mark = dataclasses.replace(last, source_signal_in_progress=reader.mark_for(row))
                if not write_acknowledged(offsets, mark, f"signal {reader.origin(row)}"):
                    return True  # the store failed: its next commit raises and the engine stops
            try:
                act(reader.read(row))
                deferred = None
            except ActionDeferred as exc:
                deferred = exc
            if marked and last is not None:
                write_acknowledged(offsets, dataclasses.replace(
                    last, source_signal_in_progress=None), "the end of a signal's mark")
            if deferred is None:
                break
            delay = min(RETRY_MAX_S, RETRY_FIRST_S * 2.0 ** retries)
            retries += 1
            log.warning("%s; not acted on yet, trying again in %.0fs (the stream waits at "
                        "its transaction)", deferred, delay)
            if not wait(delay):
                return False
    return True


def attempts_that_died(stored: ConnectorOffsets, here: str | None = None) -> SignalMark | None:
    """The stored mark, its last attempt not counted when its writer still runs on this host
    (that instance lost its lease, frozen or cut off; it did not die acting on the signal)."""
    mark = stored.signal_in_progress
    writer = stored.writer
    if mark is None or writer is None or not _runs_here(writer.host, writer.pid, here):
        return mark
    log.info("signal at offset %d was being acted on by %s pid %d, which still runs: it lost "
             "its lease, that attempt is not counted", mark.offset, writer.host, writer.pid)
    return mark.previous_attempt()


def source_attempts_that_died(stored: ConnectorOffsets, here: str | None = None
                              ) -> SourceMark | None:
    """`attempts_that_died` for the signal table's row the stored record marks."""
    mark = stored.source_signal_in_progress
    writer = stored.writer
    if mark is None or writer is None or not _runs_here(writer.host, writer.pid, here):
        return mark
    log.info("signal row %d of GTID %s was being acted on by %s pid %d, which still runs: it "
             "lost its lease, that attempt is not counted", mark.row, mark.gtid, writer.host,
             writer.pid)
    return mark.previous_attempt()


def _runs_here(host: str, pid: int, here: str | None) -> bool:
    """`pid` is a live process (not a zombie) on this host, and not this process."""
    if host != (here or socket.gethostname()) or pid <= 0 or pid == os.getpid():
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            state = stat.read().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def write_acknowledged(offsets: OffsetStore, state: ConnectorOffsets, what: str) -> bool:
    """Write `state` at once and wait for Kafka's acknowledgement; False if the store failed.

    Waits as long as the broker is away, as the stream does (one warning after 5 s)."""
    offsets.seed(state)
    started = time.monotonic()
    warned = False
    while not offsets.flush(1.0):
        if offsets.failure is not None:
            return False
        if not warned and time.monotonic() - started >= WAIT_WARNING_S:
            log.warning("%s waits for its offsets write to be acknowledged (%.0fs so far)",
                        what, time.monotonic() - started)
            warned = True
    if warned:
        log.info("%s: offsets write acknowledged after %.0fs", what, time.monotonic() - started)
    return True
