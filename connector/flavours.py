"""Where MariaDB and MySQL differ, in one object per server flavour.

As Debezium splits `debezium-connector-binlog` from its MariaDB and MySQL modules: the
binlog core asks the flavour for its GTID and position types, where a first start
streams from, the snapshot watermarks, how a SELECT is bounded, what the stream request
carries and which server settings capture needs. Nothing else tests the flavour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import pymysql

from connector.gtid import (
    Gtid,
    GtidSet,
    MariaDbGtidPos,
    MariaGtid,
    MysqlGtid,
    Position,
    parse_owned,
)

__all__ = ["MARIADB", "MYSQL", "Flavour", "FlavourName", "Requirement", "applied_or_streamed",
           "flavour_named", "flavour_of_server", "gtid_fields", "position_of_either",
           "server_flavour"]

FlavourName = Literal["mysql", "mariadb"]


@dataclass(frozen=True, slots=True)
class Requirement:
    """A server variable capture needs: its name, the value, what goes wrong otherwise."""

    name: str
    needed: str  # as SHOW GLOBAL VARIABLES reports it
    why: str
    cnf: str | None = None  # the my.cnf value when not `needed` (log_bin takes a file name)

    @property
    def cnf_value(self) -> str:
        return self.cnf if self.cnf is not None else (self.needed or '""')


COMMON_REQUIRED = (
    Requirement("log_bin", "ON", "there is no binlog to read", cnf="binlog"),
    Requirement("binlog_format", "ROW", "statement-logged changes carry no rows"),
    Requirement("binlog_row_image", "FULL",
                "updates and deletes would lack their full before-image"),
    Requirement("binlog_row_metadata", "FULL", "column names would be unknown"),
)


class Flavour:
    """The MariaDB/MySQL differences of the binlog core (see the two instances below)."""

    name: FlavourName
    is_mariadb: bool
    cnf_group: str  # the my.cnf section its server reads
    # The server variables read at start besides the requirements (replica detection).
    probe_variables: tuple[str, ...] = ()
    # SHOW CREATE TABLE writes integer display widths (int(11)): Debezium's column length.
    shows_integer_widths: bool = False

    def position(self, text: str) -> Position:
        """A stream position from its text form (offsets, REST); ValueError if not one."""
        raise NotImplementedError

    def gtid(self, fields: tuple[Any, ...]) -> MariaGtid | MysqlGtid:
        """A GTID from `gtid_fields` (how transactions cross the reader's pipe)."""
        raise NotImplementedError

    def current_position(self, cursor: Any) -> Position:
        """Where a first start streams from: everything the server has binlogged."""
        raise NotImplementedError

    def oldest_position(self, cursor: Any) -> Position:
        """Where the server's oldest binlog starts: what it has purged (a replica provisioned
        by clone or backup never binlogged its history). Streaming from the empty position
        instead asks for purged transactions, and the server refuses (error 1236)."""
        raise NotImplementedError

    def without(self, position: Position, gtids: list[Gtid]) -> Position | None:
        """`position` less the transactions `gtids`; None where a position cannot leave
        one out (MariaDB's: the last GTID per domain)."""
        raise NotImplementedError

    def unapplied(self, cursor: Any, streamed: Position) -> str:
        """What of `streamed` this server has still to apply ("" when nothing): the stream
        started from offsets ahead of it (written while reading the primary, or a replica
        further on). A chunk read before it has would be older than events already sent."""
        raise NotImplementedError

    def read_low(self, cursor: Any, streamed: Position) -> Position:
        """Before the chunk SELECT: never ahead of what the SELECT sees, and never behind
        `streamed` (the stream's position when the chunk was asked for) where the server
        cannot say what the SELECT sees: a window opens only once L covers what the stream
        emitted, so a part the stream is past and the server never vouches for would keep
        every chunk from opening."""
        raise NotImplementedError

    def read_high(self, cursor: Any) -> Position:
        """After the chunk SELECT: never behind what the SELECT saw."""
        raise NotImplementedError

    def bounded(self, sql: str, seconds: float) -> str:
        """`sql` (a SELECT) with a server-side time limit: the server aborts it, not us."""
        raise NotImplementedError

    def stream_start(self, position: Position) -> Any:
        """The `auto_position` mysql-replication sends for `position`."""
        raise NotImplementedError

    def requirements(self, variables: dict[str, str], replica: bool) -> tuple[Requirement, ...]:
        raise NotImplementedError

    def is_replica(self, cursor: Any) -> bool:
        raise NotImplementedError

    def history_gtids(self, before: Position, gtid: Gtid) -> str:
        """The `gtids` of a schema-history record's position, as the flavour's Debezium
        connector writes it for DDL `gtid` applied at position `before`."""
        raise NotImplementedError

    def gtids_at(self, cursor: Any, file: str, pos: int) -> str | None:
        """The position at a binlog file/pos (offsets without GTIDs), None if unknown."""
        raise NotImplementedError


def gtid_fields(gtid: Gtid) -> tuple[Any, ...]:
    """A GTID as plain values (pickling a dataclass calls back into Python per object)."""
    if isinstance(gtid, MariaGtid):
        return gtid.domain, gtid.server_id, gtid.seq
    if isinstance(gtid, MysqlGtid):
        return gtid.uuid, gtid.tag, gtid.seq
    raise TypeError(f"not a GTID object: {gtid!r}")


def _first(cursor: Any, sql: str) -> str:
    cursor.execute(sql)
    row = cursor.fetchone()
    return str(row[0] if row and row[0] is not None else "")


class _MariaDb(Flavour):
    """MariaDB: `domain-server-seq` GTIDs; a position is the last GTID per domain.

    Measured: `@@gtid_binlog_pos` read *before* a SELECT can be ahead of it (the binlog is
    written before the InnoDB commit is visible), while `@@gtid_slave_pos` is committed
    with the replicated transaction itself. So: low = gtid_slave_pos, high =
    gtid_binlog_pos. gtid_slave_pos says nothing of the domains the applier does not
    apply: this server's own writes (a logged ANALYZE TABLE or user change on a replica, a
    primary's every write, a former primary's old domain). There L takes the stream's
    position when the chunk was asked for, and any later transaction is outside L and
    drops the rows it touches. This one relies on order, not a committed variable: a
    transaction the stream read is committed by the time the SELECT runs (its InnoDB
    commit follows its binlog write at once; the stream's read, the request's pipe and
    the watermark query come between). Without it L never covered the stream there and
    every chunk was selected again, for ever.
    """

    name: FlavourName = "mariadb"
    is_mariadb = True
    cnf_group = "[mariadb]"
    probe_variables = ("gtid_binlog_pos", "log_bin_compress")
    shows_integer_widths = True

    def position(self, text: str) -> MariaDbGtidPos:
        return MariaDbGtidPos.parse(text)

    def gtid(self, fields: tuple[Any, ...]) -> MariaGtid:
        return MariaGtid(*fields)

    def current_position(self, cursor: Any) -> MariaDbGtidPos:
        return MariaDbGtidPos.parse(_first(cursor, "SELECT @@global.gtid_binlog_pos"))

    def oldest_position(self, cursor: Any) -> MariaDbGtidPos:
        """The Gtid_list the oldest binlog file starts with."""
        cursor.execute("SHOW BINARY LOGS")
        first = cursor.fetchone()
        cursor.fetchall()
        if first is None:
            return MariaDbGtidPos()
        return MariaDbGtidPos.parse(self.gtids_at(cursor, str(first[0]), 4) or "")

    def without(self, position: Position, gtids: list[Gtid]) -> None:
        return None

    def unapplied(self, cursor: Any, streamed: Position) -> str:
        return ""  # read_low holds gtid_slave_pos: no window opens before the applier's turn

    def read_low(self, cursor: Any, streamed: Position) -> MariaDbGtidPos:
        cursor.execute("SELECT @@global.gtid_slave_pos, @@global.server_id")
        applied, server_id = cursor.fetchone()
        assert isinstance(streamed, MariaDbGtidPos)
        return applied_or_streamed(MariaDbGtidPos.parse(str(applied or "")), streamed,
                                   int(server_id))

    def read_high(self, cursor: Any) -> MariaDbGtidPos:
        return self.current_position(cursor)

    def bounded(self, sql: str, seconds: float) -> str:
        _check_select(sql)
        return f"SET STATEMENT max_statement_time={seconds:g} FOR {sql}"

    def stream_start(self, position: Position) -> str:
        return str(position)

    def requirements(self, variables: dict[str, str], replica: bool) -> tuple[Requirement, ...]:
        extra: tuple[Requirement, ...] = (
            Requirement("gtid_strict_mode", "ON",
                        "snapshot watermarks compare GTID sequence numbers per domain"),
            Requirement("log_bin_compress", "OFF", "compressed row events are not decoded"),
        )
        if replica:
            extra += (Requirement("log_slave_updates", "ON", "replicated transactions would "
                                  "not be in this replica's binlog"),)
        return COMMON_REQUIRED + extra

    def is_replica(self, cursor: Any) -> bool:
        """A GTID replication state or running replication (SHOW SLAVE STATUS needs SLAVE
        MONITOR, which the connector's user lacks)."""
        if _first(cursor, "SELECT @@global.gtid_slave_pos"):
            return True
        cursor.execute("SHOW GLOBAL STATUS LIKE 'Slaves_running'")
        row = cursor.fetchone()
        return bool(row and str(row[1]) not in ("0", "OFF"))

    def history_gtids(self, before: Position, gtid: Gtid) -> str:
        return str(gtid)  # the DDL's own GTID (Debezium's MariaDB history holds none)

    def gtids_at(self, cursor: Any, file: str, pos: int) -> str | None:
        cursor.execute("SELECT BINLOG_GTID_POS(%s, %s)", (file, pos))
        row = cursor.fetchone()
        return None if row is None or row[0] is None else str(row[0])


class _MySql(Flavour):
    """MySQL: `uuid[:tag]:n` GTIDs; a position is a GTID set.

    A transaction's GTID is owned (`@@global.gtid_owned`) from before its binlog write
    until, after its InnoDB commit, the server moves it into `@@global.gtid_executed` in
    one step. So gtid_executed read before the SELECT holds only committed transactions
    (never ahead), and gtid_owned read after the SELECT, then gtid_executed, holds every
    transaction the SELECT can have seen (never behind): one committed before the SELECT
    began is either executed already or still owned. gtid_executed alone, read after the
    SELECT, can lag a commit the SELECT saw. README "Snapshot watermarks on MySQL".
    """

    name: FlavourName = "mysql"
    is_mariadb = False
    cnf_group = "[mysqld]"
    probe_variables = ("gtid_mode", "enforce_gtid_consistency", "replica_parallel_workers",
                       "replica_preserve_commit_order", "binlog_row_value_options",
                       "binlog_transaction_compression", "log_replica_updates")

    def position(self, text: str) -> GtidSet:
        return GtidSet.parse(text)

    def gtid(self, fields: tuple[Any, ...]) -> MysqlGtid:
        return MysqlGtid(*fields)

    def current_position(self, cursor: Any) -> GtidSet:
        return GtidSet.parse(_first(cursor, "SELECT @@global.gtid_executed"))

    def oldest_position(self, cursor: Any) -> GtidSet:
        return GtidSet.parse(_first(cursor, "SELECT @@global.gtid_purged"))

    def without(self, position: Position, gtids: list[Gtid]) -> GtidSet:
        assert isinstance(position, GtidSet)
        return position - GtidSet.of(g for g in gtids if not isinstance(g, MariaGtid))

    def unapplied(self, cursor: Any, streamed: Position) -> str:
        """The GTIDs of `streamed` not executed here, of the server UUIDs this server has
        executed GTIDs of (its sources): those the applier has still to apply. A UUID it
        never had (another replica's own writes) never comes: read_low's business. Owned
        ones are committing now (the stream reads this server's binlog before its commits
        are visible): read_low leaves them out of L, no reason to wait here."""
        assert isinstance(streamed, GtidSet)
        owned = self._owned(cursor)
        executed = self.current_position(cursor)
        sources = {uuid for uuid, _ in executed.intervals()}
        missing = streamed - (owned | executed)
        return str(GtidSet({tsid: ivs for tsid, ivs in missing.intervals().items()
                            if tsid[0] in sources}))

    def read_low(self, cursor: Any, streamed: Position) -> GtidSet:
        """gtid_executed, and the GTIDs of `streamed` this server never had: owned, then
        executed read after owned hold every transaction it binlogged (executed stays
        executed), so the rest of `streamed` (offsets written while reading another server)
        is no transaction the stream will deliver or the SELECT can see."""
        assert isinstance(streamed, GtidSet)
        owned = self._owned(cursor)
        executed = self.current_position(cursor)
        return executed | (streamed - (owned | executed))

    def read_high(self, cursor: Any) -> GtidSet:
        owned = self._owned(cursor)
        return owned | self.current_position(cursor)

    def _owned(self, cursor: Any) -> GtidSet:
        return parse_owned(_first(cursor, "SELECT @@global.gtid_owned"))

    def bounded(self, sql: str, seconds: float) -> str:
        _check_select(sql)
        return f"SELECT /*+ MAX_EXECUTION_TIME({int(seconds * 1000)}) */ {sql[len('SELECT '):]}"

    def stream_start(self, position: Position) -> Any:
        from connector.binlog.mysql_wire import DumpGtids

        assert isinstance(position, GtidSet)
        return DumpGtids(position)

    def requirements(self, variables: dict[str, str], replica: bool) -> tuple[Requirement, ...]:
        extra: tuple[Requirement, ...] = (
            Requirement("gtid_mode", "ON", "positions and snapshot watermarks are GTID sets"),
            Requirement("enforce_gtid_consistency", "ON",
                        "statements that cannot be logged with a GTID would pass"),
            Requirement("binlog_row_value_options", "",
                        "PARTIAL_JSON logs JSON updates as diffs gtidmark does not apply"),
            Requirement("binlog_transaction_compression", "OFF",
                        "compressed transaction payloads are not decoded"),
        )
        if replica:
            extra += (Requirement("log_replica_updates", "ON", "replicated transactions "
                                  "would not be in this replica's binlog"),)
            if _int(variables.get("replica_parallel_workers")) > 1:
                extra += (Requirement("replica_preserve_commit_order", "ON",
                                      "a parallel applier would commit out of the source's "
                                      "order"),)
        return COMMON_REQUIRED + extra

    def is_replica(self, cursor: Any) -> bool:
        """SHOW REPLICA STATUS (8.0.22+) or SHOW SLAVE STATUS: REPLICATION CLIENT suffices."""
        try:
            cursor.execute("SHOW REPLICA STATUS")
        except pymysql.MySQLError:  # older servers know only the old name
            cursor.execute("SHOW SLAVE STATUS")
        return cursor.fetchone() is not None

    def history_gtids(self, before: Position, gtid: Gtid) -> str:
        return str(before)  # the set executed before the DDL, as Debezium's offsets then

    def gtids_at(self, cursor: Any, file: str, pos: int) -> str | None:
        return None  # MySQL cannot map a file/pos to a GTID set


def applied_or_streamed(applied: MariaDbGtidPos, streamed: MariaDbGtidPos,
                        server_id: int) -> MariaDbGtidPos:
    """MariaDB's L: `applied` (gtid_slave_pos) in the domains the applier applies; the
    stream's GTID in a domain it has never applied, or whose last streamed transaction
    this server (`server_id`) wrote itself (a replica since promoted: gtid_slave_pos stays
    where replication stopped)."""
    low = applied
    for gtid in streamed:
        known = applied.get(gtid.domain)
        if known is None or gtid.server_id == server_id and gtid.seq > known.seq:
            low = low.advance(gtid)
    return low


def _int(text: str | None) -> int:
    try:
        return int(text or 0)
    except ValueError:
        return 0


def _check_select(sql: str) -> None:
    if not sql.startswith("SELECT "):
        raise ValueError("only a SELECT can be bounded")


MARIADB: Flavour = _MariaDb()
MYSQL: Flavour = _MySql()


def flavour_named(name: str) -> Flavour:
    if name == "mariadb":
        return MARIADB
    if name == "mysql":
        return MYSQL
    raise ValueError(f"unknown flavour {name!r}")


def server_flavour(cursor: Any) -> Flavour:
    """The flavour of the server `cursor` is connected to."""
    cursor.execute("SHOW GLOBAL VARIABLES LIKE 'gtid_binlog_pos'")
    return MARIADB if cursor.fetchall() else MYSQL


def position_of_either(text: str) -> Position:
    """A position of whichever flavour `text` is (offsets read before the server is known)."""
    try:
        return MARIADB.position(text)
    except ValueError:
        return MYSQL.position(text)


def flavour_of_server(variables: dict[str, Any]) -> Flavour:
    """MariaDB has @@gtid_binlog_pos (whatever version string it reports); MySQL does not."""
    return MARIADB if "gtid_binlog_pos" in {k.lower() for k in variables} else MYSQL
