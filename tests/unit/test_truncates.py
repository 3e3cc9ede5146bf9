"""connector.truncates: which columns a TRUNCATE record carries at its point of the stream."""

from __future__ import annotations

from connector.binlog.ddl import parse_ddl
from connector.schema import Column, TableSchema
from connector.truncates import TableShapes


def _schema(db: str, table: str, *names: str) -> TableSchema:
    return TableSchema(db, table, tuple(Column(n, "int") for n in names), (names[0],))


def _after(shapes: TableShapes, ddl: str) -> None:
    shapes.after_ddl(ddl, parse_ddl(ddl, "d"))


def test_rows_seen_give_the_columns_and_truncate_keeps_them() -> None:
    shapes = TableShapes()
    shapes.saw(_schema("d", "t", "id", "v"))
    _after(shapes, "TRUNCATE TABLE t")
    assert shapes.schema("d", "t") == _schema("d", "t", "id", "v")
    assert shapes.schema("d", "other") is None


def test_a_rename_carries_the_columns_to_the_new_name() -> None:
    shapes = TableShapes()
    shapes.saw(_schema("d", "a", "id"))
    shapes.saw(_schema("d", "b", "id", "x"))
    _after(shapes, "RENAME TABLE a TO a2, b TO b2")
    assert shapes.schema("d", "a2") == _schema("d", "a2", "id")
    assert shapes.schema("d", "b2") == _schema("d", "b2", "id", "x")
    assert shapes.schema("d", "a") is None
    _after(shapes, "ALTER TABLE a2 RENAME TO a3")
    assert shapes.schema("d", "a3") == _schema("d", "a3", "id")


def test_any_other_ddl_forgets_the_table_and_the_lookup_answers() -> None:
    asked: list[tuple[str, str]] = []

    def lookup(db: str, table: str) -> TableSchema | None:
        asked.append((db, table))
        return _schema(db, table, "id", "w") if table != "gone" else None
    shapes = TableShapes(lookup)
    for name in ("t", "r", "gone"):
        shapes.saw(_schema("d", name, "id"))
    _after(shapes, "ALTER TABLE t ADD COLUMN w INT")
    _after(shapes, "ALTER TABLE r ADD COLUMN w INT, RENAME TO r2")  # not a rename only
    _after(shapes, "DROP TABLE gone")
    assert shapes.schema("d", "t") == _schema("d", "t", "id", "w")
    assert shapes.schema("d", "r2") == _schema("d", "r2", "id", "w")
    assert shapes.schema("d", "gone") is None
    assert shapes.schema("d", "t") is not None
    assert asked == [("d", "t"), ("d", "r2"), ("d", "gone")]  # t's answer is kept
