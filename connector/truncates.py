"""The columns of a table at a point of the stream, for its TRUNCATE record (op=t).

Debezium's truncate record carries the table's value schema (before/after null), so the
dispatcher needs the table's structure where the TRUNCATE is: the last rows event of the
table gave it, a RENAME TABLE carries it to the new name, any other DDL forgets it; a table
not written since then is read from the replica's catalog (`lookup`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from connector.binlog.ddl import DdlChange, strip_comments
from connector.schema import TableSchema

# ALTER TABLE a RENAME [TO|AS] b and nothing else: the columns are a's.
_ALTER_RENAME_ONLY = re.compile(r"^\s*ALTER\s+(?:ONLINE\s+)?TABLE\s+(?:IF\s+EXISTS\s+)?\S+\s+"
                                r"RENAME\s+(?:TO\s+|AS\s+)?[^\s,]+\s*;?\s*$", re.IGNORECASE)

Lookup = Callable[[str, str], "TableSchema | None"]


class TableShapes:
    """table id -> the TableSchema its rows had last, kept across renames."""

    def __init__(self, lookup: Lookup | None = None) -> None:
        self._lookup = lookup
        self._seen: dict[str, TableSchema] = {}

    def saw(self, schema: TableSchema) -> None:
        """A rows event (or a snapshot chunk) of `schema`'s table."""
        self._seen[schema.id] = schema

    def after_ddl(self, ddl: str, change: DdlChange) -> None:
        """Follow `change`: a pure rename moves the structure, anything else but TRUNCATE
        forgets the tables it names (their next rows, or the catalog, tell)."""
        if change.kind == "TRUNCATE":
            return
        renames = change.kind == "RENAME" and (
            ddl.lstrip().upper().startswith("RENAME")
            or _ALTER_RENAME_ONLY.match(strip_comments(ddl)) is not None)
        if renames:
            pairs = list(zip(change.tables[::2], change.tables[1::2], strict=True))
            moved = {new: self._seen.pop(f"{old[0]}.{old[1]}", None) for old, new in pairs}
            for (db, table), schema in moved.items():
                self._seen.pop(f"{db}.{table}", None)
                if schema is not None:
                    self._seen[f"{db}.{table}"] = dataclasses.replace(schema, db=db, table=table)
            return
        for db, table in change.tables:
            self._seen.pop(f"{db}.{table}", None)
        if change.kind == "DATABASE" and change.database:
            for table_id in [t for t in self._seen if t.startswith(f"{change.database}.")]:
                del self._seen[table_id]

    def schema(self, db: str, table: str) -> TableSchema | None:
        """The table's structure at this point of the stream; None when nothing tells it."""
        known = self._seen.get(f"{db}.{table}")
        if known is None and self._lookup is not None:
            known = self._lookup(db, table)
            if known is not None:
                self._seen[known.id] = known
        return known
