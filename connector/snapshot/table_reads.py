"""A table's chunking as the chunk reader reads it for the coordinator, off the stream.

Debezium's layering: the snapshot's state (SnapshotState, TableProgress: which tables, how
far, where each ends) is the coordinator's; every query a table's chunks need runs in the
chunk reader process (chunk_reader.py). Its columns, chunk key and filter come from the
catalog and its largest key from a SELECT of up to CHUNK_TIMEOUT_S: on the engine thread
either held the stream for as long as the replica took, or as long as a dead connection
took to be noticed.
"""

from __future__ import annotations

from dataclasses import dataclass

from connector.flavours import Flavour
from connector.schema import TableSchema
from connector.snapshot.chunks import Condition
from connector.snapshot.keys import binlog_key_reader
from connector.snapshot.progress import TableProgress
from connector.snapshot.session import Session
from connector.snapshot.tables import ChunkedTable, TableSkipped, measure, open_table
from connector.snapshot.window import Key


@dataclass(frozen=True, slots=True)
class TableRequest:
    """Read how `progress.table` is chunked; `measure`: also its largest key and size (its
    first chunk is next)."""

    number: int
    progress: TableProgress
    measure: bool


@dataclass(frozen=True, slots=True)
class TableRead:
    """The answer: the table as `tables.open_table` reads it, and its bounds if measured."""

    number: int
    schema: TableSchema
    key_columns: tuple[str, ...]
    condition: Condition | None
    exact_keys: tuple[str, ...]
    bounds: tuple[Key, int] | None  # (largest key, () when empty; estimated rows)

    def chunked(self) -> ChunkedTable:
        return ChunkedTable(self.schema, self.key_columns, self.condition,
                            binlog_key_reader(self.schema, self.key_columns), self.exact_keys)


@dataclass(frozen=True, slots=True)
class TableRefused:
    """The table cannot be snapshotted (gone, no safe key, a filter it refuses): why."""

    number: int
    reason: str


def read_table(session: Session, request: TableRequest,
               flavour: Flavour) -> TableRead | TableRefused:
    try:
        table = open_table(session, request.progress)
    except TableSkipped as exc:
        return TableRefused(request.number, str(exc))
    bounds = measure(session, request.progress.table, table, flavour) if request.measure \
        else None
    return TableRead(request.number, table.schema, table.key_columns, table.condition,
                     table.exact_keys, bounds)
