"""What the binlog reader hands to the engine: transactions and the rows they changed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from connector.gtid import MariaGtid, MysqlGtid
from connector.schema import TableSchema

Op = Literal["c", "u", "d"]


@dataclass(slots=True)
class RowsChange:
    """The rows of one binlog rows event (c/d: row dicts; u: (before, after) pairs)."""

    table: TableSchema
    op: Op
    rows: list[Any]
    pos: int


class InnerDdl(NamedTuple):
    """A DDL statement inside BEGIN..COMMIT (CREATE TABLE ... SELECT logged as rows)."""

    ddl: str
    pos: int  # where its query event starts: its schema change's source.pos
    # Where the transaction's first event starts (MySQL's BEGIN, MariaDB's GTID): Debezium's
    # history records a statement inside a transaction at that position, events counted on.
    begun: int


class Gap(NamedTuple):
    """A write the binlog holds without whole row images: nothing can be emitted for it."""

    tables: tuple[tuple[str, str], ...] | None  # (db, table) written; None: cannot be named
    db: str | None  # the default database of the session that wrote it
    what: str  # how, for the one line: "as a statement ('INSERT ...'), which has no row images"
    setting: str  # what the writing session must set instead: "binlog_format=ROW"


@dataclass(slots=True)
class Transaction:
    """One committed transaction or DDL statement, in binlog order."""

    gtid: MariaGtid | MysqlGtid
    file: str
    begin_pos: int
    end_pos: int
    ts_us: int  # its commit time (MySQL's GTID event), else its first event's second
    server_id: int
    thread: int | None = None
    db: str | None = None
    ddl: str | None = None
    changes: list[RowsChange] = field(default_factory=list)
    gaps: tuple[Gap, ...] = ()  # its writes without whole row images, in binlog order
    hold: str | None = None  # offsets position while an XA is open (its start), else None
    piece: int = 0  # pieces of one large transaction are numbered from 0
    partial: bool = False  # more pieces of this transaction follow
    # A DDL statement inside BEGIN..COMMIT: its schema change goes out before the
    # transaction's rows (carried by its first piece).
    created: InnerDdl | None = None
    # The binlog bytes this transaction (or piece) spans in the reader process: what the
    # queues and the pipe's messages are bounded by. Not sent over the pipe.
    size: int = 0

    @property
    def row_count(self) -> int:
        return sum(len(change.rows) for change in self.changes)
