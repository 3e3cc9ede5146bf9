"""The low watermark in what the server cannot vouch for (#22).

A snapshot window opens only once L covers what the stream has emitted. MariaDB's L is
`@@gtid_slave_pos`, which knows nothing of the domains the applier does not apply (a local
logged write on a replica, every write of a primary, a former primary's domain), and MySQL's
`gtid_executed` nothing of GTIDs a position carries from another server: there L never
covered the stream and every chunk was selected again, for ever.
"""

from __future__ import annotations

from typing import Any

from connector.flavours import MARIADB, MYSQL, applied_or_streamed
from connector.gtid import GtidSet, MariaDbGtidPos, MariaGtid, MysqlGtid
from connector.snapshot.window import ChunkWindow, RecentChanges

SRC = "2174b383-5441-11e8-b90a-c80aa9429562"  # the primary
OWN = "3e11fa47-71ca-11e1-9e33-c80aa9429562"  # the replica's own writes
ELSEWHERE = "024da167-0c0c-11e8-8442-00059a3c7b00"  # offsets written reading another server


def maria(text: str) -> MariaDbGtidPos:
    return MariaDbGtidPos.parse(text)


class Cursor:
    """Answers the watermark queries with fixed values, in the order they are asked."""

    def __init__(self, answers: dict[str, tuple[Any, ...]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def execute(self, sql: str, args: Any = None) -> None:
        self.asked.append(sql)

    def fetchone(self) -> tuple[Any, ...]:
        return self.answers[self.asked[-1]]


def test_a_replicas_local_domain_no_longer_keeps_every_window_from_opening() -> None:
    applied = maria("0-1-100")  # gtid_slave_pos: the applier's domain only
    streamed = maria("0-1-100,7-2-3")  # an ANALYZE TABLE logged on the replica in domain 7
    assert not ChunkWindow("d.t", {}, applied, applied).safe_to_open(streamed)  # the loop
    low = applied_or_streamed(applied, streamed, server_id=2)
    assert low == streamed
    assert ChunkWindow("d.t", {}, low, low).safe_to_open(streamed)


def test_the_applier_position_stays_in_the_domains_it_applies() -> None:
    # 0-1-101 is in the binlog the stream read, not yet committed: L must not claim it.
    low = applied_or_streamed(maria("0-1-100"), maria("0-1-101"), server_id=2)
    assert low == maria("0-1-100")
    # A new primary's first transaction, applied but not yet in gtid_slave_pos: the same.
    low = applied_or_streamed(maria("0-1-100"), maria("0-3-101"), server_id=2)
    assert low == maria("0-1-100")


def test_a_primary_and_a_promoted_replica_take_the_stream_position() -> None:
    assert applied_or_streamed(maria(""), maria("0-1-50"), server_id=1) == maria("0-1-50")
    # Promoted: gtid_slave_pos stays where replication stopped, the server writes domain 0.
    low = applied_or_streamed(maria("0-1-100"), maria("0-2-150"), server_id=2)
    assert low == maria("0-2-150")


def test_a_local_write_after_the_request_drops_the_rows_it_touched() -> None:
    asked_at = maria("0-1-100,7-2-3")
    low = applied_or_streamed(maria("0-1-100"), asked_at, server_id=2)
    recent = RecentChanges(asked_at, None)
    recent.record("d.t", MariaGtid(7, 2, 4), (3,))  # emitted before the window opened
    processed = asked_at.advance(MariaGtid(7, 2, 4))
    recent.end_transaction(processed)
    window = ChunkWindow("d.t", {(3,): {"id": 3}, (4,): {"id": 4}}, low, processed)
    assert recent.replay_into(window, processed)
    assert window.close() == [{"id": 4}]


def test_mariadb_reads_the_applier_position_and_its_own_server_id() -> None:
    query = "SELECT @@global.gtid_slave_pos, @@global.server_id"
    cursor = Cursor({query: ("0-1-100", 2)})
    assert MARIADB.read_low(cursor, maria("0-1-100,7-2-3")) == maria("0-1-100,7-2-3")
    assert cursor.asked == [query]


def test_mysql_low_holds_gtids_of_another_server_but_not_one_in_flight() -> None:
    executed = GtidSet.parse(f"{SRC}:1-100,{OWN}:1-3")
    in_flight = MysqlGtid(SRC, "", 101)  # binlogged, read by the stream, not committed yet
    streamed = executed.add(in_flight) | GtidSet.parse(f"{ELSEWHERE}:1-7")
    cursor = Cursor({"SELECT @@global.gtid_owned": (f"{SRC}:101#12",),
                     "SELECT @@global.gtid_executed": (str(executed),)})
    low = MYSQL.read_low(cursor, streamed)
    assert cursor.asked == ["SELECT @@global.gtid_owned", "SELECT @@global.gtid_executed"]
    assert low == executed | GtidSet.parse(f"{ELSEWHERE}:1-7")
    assert not low.contains(in_flight)
    # The replica's own writes are in gtid_executed already: nothing to add for them.
    assert executed.covers(GtidSet.parse(f"{OWN}:1-3"))


def test_mysql_unapplied_is_what_the_applier_still_owes() -> None:
    """Offsets ahead of this replica: its sources' GTIDs it has not applied are awaited;
    those of a server it never had (ELSEWHERE) never come and are not."""
    executed = GtidSet.parse(f"{SRC}:1-80,{OWN}:1-3")
    streamed = GtidSet.parse(f"{SRC}:1-100:etl:1-2,{ELSEWHERE}:1-7,{OWN}:1-3")
    cursor = Cursor({"SELECT @@global.gtid_owned": (f"{SRC}:81#12",),
                     "SELECT @@global.gtid_executed": (str(executed),)})
    # 81: binlogged here, committing now (the stream read it): no reason to wait
    assert GtidSet.parse(MYSQL.unapplied(cursor, streamed)) == GtidSet.parse(
        f"{SRC}:82-100:etl:1-2")
    assert MYSQL.unapplied(cursor, executed) == ""
    assert MARIADB.unapplied(Cursor({}), maria("0-1-100")) == ""
