"""A schema-history record's `tableChanges` is one Debezium's reader can take back: a CREATE
or ALTER of a table whose DDL was not streamed here has no structure, and Debezium's
JsonTableChangeSerializer fails on such an entry (its task stops with a NullPointerException
when it resumes over gtidmark's history), so the record has none and Debezium parses its
`ddl` instead (tests/integration/test_migration_procedure.py, the way back)."""

from __future__ import annotations

from connector.binlog.declared import DeclaredTable, parse_column
from connector.events.history import history_changes, table_change


def declared() -> DeclaredTable:
    column = parse_column("id INT NOT NULL")
    assert column is not None
    return DeclaredTable(columns=dict([column]), primary_key=["id"])


def test_an_alter_of_a_table_never_declared_leaves_the_ddl_to_debeziums_parser() -> None:
    assert history_changes([table_change("ALTER", "db", "t", None)], [None]) == []
    renamed = table_change("ALTER", "db", "t2", None)
    assert history_changes([renamed], ['"db"."t"']) == []


def test_a_known_structure_and_a_drop_stay_as_debezium_writes_them() -> None:
    changes = [table_change("ALTER", "db", "t", declared())]
    (entry,) = history_changes(changes, [None])
    assert entry["table"]["primaryKeyColumnNames"] == ["id"]
    assert history_changes([table_change("DROP", "db", "t", None)], [None]) == [
        {"type": "DROP", "id": '"db"."t"'}]
