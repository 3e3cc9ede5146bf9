"""Which offsets record a start resumes from (connector/offsets/resume.py): examples, and a
model of leaders, zombies, REST resets, skewed clocks and old partitions."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from connector.leadership.lease import Instance
from connector.offsets.resume import CLOSED, OffsetRecord, resume_point
from connector.offsets.value import ConnectorOffsets

A, B = Instance("a", 1, 1.0), Instance("b", 2, 2.0)


def ours(gtids: str, epoch: int, writer: Instance | None = A) -> bytes:
    return ConnectorOffsets(gtids=gtids, epoch=epoch, writer=writer).to_bytes()


def debeziums(gtids: str) -> bytes:
    return json.dumps({"gtids": gtids, "file": "bin.000001", "pos": 4}).encode()


def log(*values: bytes | None, partition: int = 0) -> list[OffsetRecord]:
    return [OffsetRecord(partition, i, 1_000 + i, v) for i, v in enumerate(values)]


def gtids(raw: bytes | None) -> Any:
    return None if raw is None else json.loads(raw)["gtids"]


def test_a_fenced_writers_late_record_loses_to_the_newer_epoch() -> None:
    found = resume_point(log(ours("0-1-5", 1), ours("0-1-9", 2, B), ours("0-1-6", 1)), 0)
    assert (gtids(found.value), found.epoch, found.owner) == ("0-1-9", 2, B)


def test_a_second_writer_of_the_same_epoch_never_wins() -> None:
    """Both read epoch 1 and took 2; the first record of epoch 2 (B's) owns it."""
    found = resume_point(log(ours("0-1-5", 1), ours("0-1-7", 2, B), ours("0-1-6", 2, A),
                             ours("0-1-8", 2, B)), 0)
    assert (gtids(found.value), found.owner) == ("0-1-8", B)


def test_a_reset_keeps_the_epoch_so_a_late_record_stays_out() -> None:
    """REST DELETE, then a late record of the leader it stopped: still forgotten."""
    found = resume_point(log(ours("0-1-9", 4), None, ours("0-1-10", 4)), 0)
    assert (found.value, found.epoch, found.owner) == (None, 4, CLOSED)
    after = resume_point(log(ours("0-1-9", 4), None, ours("0-1-3", 5, B)), 0)
    assert gtids(after.value) == "0-1-3"


def test_log_order_not_the_clock_orders_the_keys_partition() -> None:
    records = [OffsetRecord(0, 0, 9_999, ours("0-1-5", 1)),
               OffsetRecord(0, 1, 1, ours("0-1-9", 1))]  # its writer's clock stepped back
    assert gtids(resume_point(records, 0).value) == "0-1-9"


def test_other_partitions_predate_the_keys_own() -> None:
    records = [OffsetRecord(3, 0, 9_999, ours("0-1-99", 7)), *log(ours("0-1-5", 8))]
    assert gtids(resume_point(records, 0).value) == "0-1-5"
    assert gtids(resume_point(records[:1], 0).value) == "0-1-99"


def test_debeziums_records_count_in_log_order_and_close_the_epoch() -> None:
    found = resume_point(log(ours("0-1-5", 3), debeziums("0-1-20"), ours("0-1-6", 3)), 0)
    assert (gtids(found.value), found.epoch, found.owner) == ("0-1-20", 3, CLOSED)
    assert gtids(resume_point(log(debeziums("0-1-20")), 0).value) == "0-1-20"


def test_records_from_before_epochs_count_in_log_order() -> None:
    """Versions that wrote epoch 0 without HA, one writer per start."""
    found = resume_point(log(ours("0-1-5", 0, A), ours("0-1-6", 0, B), ours("0-1-7", 0, A)), 0)
    assert gtids(found.value) == "0-1-7"


@dataclass
class Writer:
    instance: Instance
    epoch: int
    landed: bool = False
    verified_at: int = -1  # index in the log after which it was verified; -1: not (yet)


@dataclass
class Model:
    records: list[OffsetRecord] = field(default_factory=list)
    writers: list[Writer] = field(default_factory=list)
    written: list[tuple[int, int]] = field(default_factory=list)  # (writer, position)
    tombstones: list[int] = field(default_factory=list)
    position: int = 0

    def append(self, value: bytes | None, clock: int) -> int:
        self.records.append(OffsetRecord(0, len(self.records), clock, value))
        return len(self.records) - 1

    def write(self, w: int, clock: int) -> None:
        self.position += 1
        writer = self.writers[w]
        self.append(ours(str(self.position), writer.epoch, writer.instance), clock)
        self.written.append((w, self.position))

    def grant(self) -> None:
        """A new leader reads the topic and takes the next epoch (its start not landed)."""
        n = len(self.writers)
        self.writers.append(Writer(Instance(f"h{n}", n, float(n)),
                                   resume_point(self.records, 0).epoch + 1))

    def land_start(self, w: int, clock: int) -> None:
        """Its start record lands; it then checks it owns its epoch (Engine._start)."""
        writer = self.writers[w]
        writer.landed = True
        self.write(w, clock)
        found = resume_point(self.records, 0)
        if (found.epoch, found.owner) == (writer.epoch, writer.instance):
            writer.verified_at = len(self.records) - 1


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_a_load_is_the_newest_record_of_the_newest_verified_leader(data: st.DataObject) -> None:
    """Any interleaving of grants, late start records, zombie writes (every verified writer
    keeps writing), REST resets, skewed clocks and old partitions: loading gives the
    newest position the newest verified leader committed, never an older one."""
    model = Model()
    old = data.draw(st.lists(st.tuples(st.integers(1, 3), st.integers(0, 5),
                                       st.integers(0, 10**6)), max_size=4))
    for partition, epoch, clock in old:  # from before a change of the partition count
        model.records.append(OffsetRecord(partition, 0, clock, ours("old", epoch, B)))
    for _ in range(data.draw(st.integers(1, 30))):
        clock = data.draw(st.integers(0, 10**6))  # every writer's clock, any skew
        pending = [i for i, w in enumerate(model.writers) if not w.landed]
        verified = [i for i, w in enumerate(model.writers) if w.verified_at >= 0]
        action = data.draw(st.sampled_from(["grant", "land", "write", "reset"]))
        if action == "grant" or (action == "land" and not pending) or (
                action == "write" and not verified):
            model.grant()
        elif action == "land":
            model.land_start(data.draw(st.sampled_from(pending)), clock)
        elif action == "write":
            model.write(data.draw(st.sampled_from(verified)), clock)
        else:
            model.tombstones.append(model.append(None, clock))
    verified = [w for w in model.writers if w.verified_at >= 0]
    if not verified:
        return
    newest = max(verified, key=lambda w: w.verified_at)
    leader = model.writers.index(newest)
    reset = [t for t in model.tombstones if t > newest.verified_at]
    cut = reset[0] if reset else len(model.records)
    expected = [position for (w, position), index in zip(
        model.written, [i for i, r in enumerate(model.records) if r.value is not None
                        and gtids(r.value) != "old"], strict=True)
        if w == leader and index < cut]
    found = resume_point(model.records, 0)
    assert gtids(found.value) == (str(expected[-1]) if not reset else None)
