"""Signals acted on between two offsets writes: marked in progress before, unmarked after.

A signal whose handling kills the process (the OOM killer, a segfault in a library) was
replayed on every start and by every HA instance: the stored signal position moves past
a signal only with a later checkpoint, which such a signal never reaches (#22). So before a
signal is read, the offsets record last written goes out again with `signal_in_progress`
set to the signal's offset, and the signal is read and acted on only once Kafka has
acknowledged it; afterwards the same record goes out without the mark. A start that loads
a mark skips that signal in one line (`SignalChannel.read`) and keeps the mark until past it.

The marked record is the last one written, changed in that field alone: its position and
snapshot state wait for no change event, and signals between its `signal_offset` and the
marked one are replayed after a crash as before (their effects were not committed). Only
records under this connector's key are marked; one mark costs one acknowledged write.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable

from connector.offsets.store import OffsetStore
from connector.offsets.value import ConnectorOffsets
from signals.channel import ReceivedSignal, SignalChannel

log = logging.getLogger(__name__)

WAIT_WARNING_S = 5.0  # Kafka Connect's offset.flush.timeout.ms default, as the commit stall


def act_on_signals(channel: SignalChannel, offsets: OffsetStore,
                   act: Callable[[ReceivedSignal], None]) -> None:
    """Read and act on the signals that arrived, each inside its in-progress mark."""
    records = channel.fetch(0)
    last = offsets.committed  # written and never None while the engine runs
    marked = False
    for record in records:
        if last is not None and channel.acts_on(record):
            mark = dataclasses.replace(last, signal_in_progress=record.offset)
            if not write_acknowledged(offsets, mark, f"signal at offset {record.offset}"):
                return  # the store failed: its next commit raises and the engine stops
            marked = True
        act(channel.read(record))
    if marked and last is not None:
        write_acknowledged(offsets, last, "the end of a signal's in-progress mark")


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
