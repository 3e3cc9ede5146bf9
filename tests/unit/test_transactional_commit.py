"""When exactly once commits: boundaries against a commit in flight and records not yet
acknowledged. A stand-in sink records the commits; the rest is the real committer."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from connector.offsets import commit
from connector.offsets.commit import TransactionalCommitter
from connector.offsets.value import ConnectorOffsets


class Sink:
    """What TransactionalCommitter asks of a TransactionalSink, its commits kept in order."""

    def __init__(self) -> None:
        self.in_transaction = 0
        self.unacked = 0
        self.in_flight_commit: Callable[[], None] | None = None
        self.commits: list[bytes] = []
        self.waited = 0

    @property
    def committing(self) -> bool:
        return self.in_flight_commit is not None

    def in_flight(self) -> int:
        return self.unacked

    def settle(self, wait: bool) -> None:
        if wait and self.in_flight_commit is not None:
            self.waited += 1
            self.end_commit()

    def end_commit(self) -> None:
        done, self.in_flight_commit = self.in_flight_commit, None
        assert done is not None
        done()

    def commit(self, offsets: tuple[str, bytes, bytes, int], timeout: float,
               on_committed: Callable[[], None], wait: bool = False) -> None:
        assert self.in_flight_commit is None, "one commit in flight at a time"
        self.commits.append(offsets[2])
        self.in_transaction = 0
        self.in_flight_commit = on_committed
        if wait:
            self.end_commit()


class Offsets:
    committed: ConnectorOffsets | None = None

    def record(self, state: ConnectorOffsets) -> tuple[str, bytes, bytes, int]:
        return "offsets", b"k", state.to_bytes(), 0

    def committed_in_transaction(self, state: ConnectorOffsets) -> None:
        self.committed = state


class Leadership:
    def check(self, at: float) -> None:
        pass


class Setup:
    def __init__(self, boundary: str = "poll", source_open: bool = False) -> None:
        self.sink = Sink()
        self.offsets = Offsets()
        self.gtids = "0-1-1"
        self.open = source_open
        self.committer = TransactionalCommitter(
            self.offsets, self.sink, Leadership(), self.state,  # type: ignore[arg-type]
            boundary, 60.0, lambda: self.open)

    def state(self) -> ConnectorOffsets:
        return ConnectorOffsets(gtids=self.gtids)

    def sent(self, records: int, gtids: str) -> None:
        self.sink.in_transaction += records
        self.gtids = gtids

    def boundary(self) -> bool:
        return self.committer.commit(leading_at=time.monotonic())


def committed_gtids(sink: Sink) -> list[str]:
    return [ConnectorOffsets.from_json(json.loads(raw)).gtids for raw in sink.commits]


def test_a_boundary_reached_while_a_commit_runs_is_taken_at_the_next_pass_not_waited_for(
        ) -> None:
    s = Setup()
    s.sent(1024, "0-1-2")
    assert s.boundary()
    s.sent(1024, "0-1-3")
    assert not s.boundary()  # the engine goes on; the records join the next transaction
    s.sent(1024, "0-1-4")
    assert not s.boundary()
    s.sink.end_commit()
    assert s.boundary()
    assert committed_gtids(s.sink) == ["0-1-2", "0-1-4"] and s.sink.waited == 0


def test_a_boundary_with_many_records_unacknowledged_waits_for_them_a_bounded_time(
        monkeypatch: Any) -> None:
    s = Setup()
    clock = [time.monotonic()]
    monkeypatch.setattr(commit.time, "monotonic", lambda: clock[0])
    s.sent(5000, "0-1-2")
    s.sink.unacked = commit.QUICK_COMMIT_IN_FLIGHT + 1
    assert not s.committer.commit(leading_at=clock[0])  # the commit would wait for them
    s.sink.unacked = commit.QUICK_COMMIT_IN_FLIGHT
    assert s.committer.commit(leading_at=clock[0])
    s.sink.end_commit()
    s.sent(5000, "0-1-3")
    s.sink.unacked = 10 * commit.QUICK_COMMIT_IN_FLIGHT
    clock[0] += commit.MAX_DEFER_S
    assert s.committer.commit(leading_at=clock[0])  # never deferred longer than that
    assert committed_gtids(s.sink) == ["0-1-2", "0-1-3"]


def test_a_start_pause_or_shutdown_commit_waits_for_the_one_in_flight_then_commits() -> None:
    s = Setup()
    s.sent(10, "0-1-2")
    assert s.boundary()
    s.sent(10, "0-1-3")
    assert s.committer.commit()
    assert s.sink.waited == 1 and not s.sink.committing
    assert committed_gtids(s.sink) == ["0-1-2", "0-1-3"]
    assert s.offsets.committed == ConnectorOffsets(gtids="0-1-3")


def test_no_boundary_falls_inside_a_source_transaction_sent_in_pieces() -> None:
    s = Setup(boundary="connector", source_open=True)
    s.sent(20_000, "0-1-1")
    assert not s.boundary()
    s.committer.transaction_end()
    assert s.sink.commits == []
    s.open = False
    s.gtids = "0-1-2"
    s.committer.transaction_end()
    assert committed_gtids(s.sink) == ["0-1-2"]


def test_the_engine_is_told_to_come_back_soon_only_while_a_commit_is_due_or_running() -> None:
    s = Setup()
    assert not s.committer.commit_pending
    s.sent(3, "0-1-2")
    assert s.committer.commit_pending  # poll: due at once
    assert s.boundary()
    assert s.committer.commit_pending  # running
    s.sink.end_commit()
    assert not s.committer.commit_pending
    interval = Setup(boundary="interval")
    interval.sent(3, "0-1-2")
    assert not interval.committer.commit_pending  # due in a minute: the idle wait is fine
