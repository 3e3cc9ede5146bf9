"""Column declarations from streamed DDL, and DEFAULT literals as event values."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from connector.binlog.ddl import parse_ddl
from connector.binlog.declared import Declared, DeclaredColumns, parse_column, with_declared
from connector.events.types import field_mapping
from connector.schema import Column, TableSchema


def brief(columns: dict[str, Declared] | None) -> dict[str, Declared] | None:
    """Type text and DEFAULT only."""
    return None if columns is None else {n: Declared(c.type_text, c.default)
                                         for n, c in columns.items()}


def follow(*statements: str) -> DeclaredColumns:
    declared = DeclaredColumns()
    for sql in statements:
        declared.apply(sql, parse_ddl(sql, "app"))
    return declared


def test_create_keeps_types_and_defaults_in_catalog_form() -> None:
    d = follow("CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL DEFAULT 7, "
               "b VARCHAR(10) DEFAULT 'it''s', c DECIMAL(5, 2) unsigned DEFAULT 1.50, "
               "h TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, "
               "k BOOLEAN DEFAULT TRUE, u INT NULL DEFAULT NULL, f FLOAT(7,3), "
               "g BIT(1) DEFAULT b'1', PRIMARY KEY (id), KEY k1 (a))")
    assert brief(d.get("app.t")) == {
        "id": Declared("int", None), "a": Declared("int", "7"),
        "b": Declared("varchar(10)", "'it''s'"), "c": Declared("decimal(5,2) unsigned", "1.50"),
        "h": Declared("timestamp", "current_timestamp()"), "k": Declared("boolean", "1"),
        "u": Declared("int", None), "f": Declared("float(7,3)", None),
        "g": Declared("bit(1)", "b'1'"),
    }


def test_alter_rename_drop_follow_the_table() -> None:
    d = follow("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(3))",
               "ALTER TABLE t ADD COLUMN w INT DEFAULT 5 AFTER id, MODIFY v TEXT NOT NULL, "
               "ADD INDEX iw (w)",
               "ALTER TABLE t ALTER COLUMN w SET DEFAULT 6, CHANGE v vv JSON",
               "RENAME TABLE t TO t2")
    assert d.get("app.t") is None
    assert brief(d.get("app.t2")) == {"id": Declared("int", None), "w": Declared("int", "6"),
                               "vv": Declared("json", None)}
    d.apply("ALTER TABLE t2 DROP COLUMN w, RENAME TO t3", parse_ddl(
        "ALTER TABLE t2 DROP COLUMN w, RENAME TO t3", "app"))
    assert set(d.get("app.t3") or {}) == {"id", "vv"}
    d.apply("DROP TABLE t3", parse_ddl("DROP TABLE t3", "app"))
    assert d.get("app.t3") is None


def test_an_alter_not_understood_forgets_the_table() -> None:
    d = follow("CREATE TABLE t (id INT PRIMARY KEY)", "ALTER TABLE t PARTITION BY HASH(id)")
    assert d.get("app.t") is None


def test_keys_and_constraints_are_not_columns() -> None:
    assert parse_column("CONSTRAINT fk FOREIGN KEY (a) REFERENCES b (id)") is None
    assert parse_column("UNIQUE KEY u (a)") is None


def test_declared_types_refine_the_binlog_columns() -> None:
    binlog = TableSchema("app", "t", (
        Column("f", "float"), Column("b", "tinyint"), Column("r", "double"),
        Column("j", "longtext", charset="utf8mb4")), ())
    declared = {"f": Declared("float(7,3)", None), "b": Declared("boolean", "1"),
                "r": Declared("real", None), "j": Declared("json", None)}
    out = with_declared(binlog, declared)
    assert out is not None
    f, b, r, j = out.columns
    assert (f.type_name, f.precision, f.scale) == ("float", 7, 3)
    assert (b.type_name, b.default, r.type_name, j.type_name) == ("boolean", "1", "float",
                                                                   "json")
    assert with_declared(binlog, {"f": declared["f"]}) is None  # another version: not used


@pytest.mark.parametrize(("column", "schema", "value"), [
    (Column("a", "int", nullable=False, default="7"), "int32", 7),
    (Column("a", "varchar", default="'it''s'"), "string", "it's"),
    (Column("a", "decimal", precision=5, scale=2, default="1.50"), "bytes",
     base64.b64decode("AJY=")),
    (Column("a", "datetime", default="'2020-01-02 03:04:05'"), "int64", 1577934245000),
    (Column("a", "timestamp", nullable=False, default="current_timestamp()"), "string",
     "1970-01-01T00:00:00Z"),
    (Column("a", "bit", length=1, default="b'1'"), "boolean", True),
    (Column("a", "boolean", default="1"), "boolean", True),
    (Column("a", "date", default="'2001-02-03'"), "int32", 11356),
    (Column("a", "time", default="'01:02:03'"), "int64", 3723000000),
    (Column("a", "year", default="2020"), "int32", 2020),
    (Column("a", "float", default="1.5"), "float", 1.5),
    (Column("a", "float", precision=7, scale=3, default="1.5"), "double", 1.5),
    (Column("a", "set", values=("s", "t"), default="'s,t'"), "string", "s,t"),
])
def test_defaults_become_the_event_value_debezium_writes(column: Column, schema: str,
                                                         value: Any) -> None:
    mapping = field_mapping(column)
    assert mapping.schema["type"] == schema
    assert mapping.schema["default"] == value


@pytest.mark.parametrize("default", [None, "uuid()", "(1 + 1)"])
def test_no_default_or_an_expression_gives_no_default(default: str | None) -> None:
    assert "default" not in field_mapping(Column("a", "varchar", default=default)).schema


def test_table_structure_follows_keys_positions_and_attributes() -> None:
    d = follow("CREATE TABLE t (a INT NOT NULL AUTO_INCREMENT, b VARCHAR(5) CHARACTER SET latin1 "
               "COMMENT 'the b', c TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, "
               "g INT AS (a + 1), CONSTRAINT pk PRIMARY KEY (a, b(3))) "
               "DEFAULT CHARSET=utf8mb4 COMMENT='tbl'",
               "ALTER TABLE t ADD COLUMN z INT FIRST, ADD COLUMN y BIT(1) DEFAULT b'1' AFTER a")
    table = d.table("app.t")
    assert table is not None
    assert list(table.columns) == ["z", "a", "y", "b", "c", "g"]
    assert table.primary_key == ["a", "b"] and table.charset == "utf8mb4"
    a, y, b, c, g = (table.columns[n] for n in "aybcg")
    assert (a.nullable, a.auto_increment, b.nullable, b.charset, g.auto_increment) == \
        (False, True, False, "latin1", False)
    assert (c.default_expression, y.default_expression) == ("1970-01-01 00:00:00", "1")
    d.apply("ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (z)",
            parse_ddl("ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (z)", "app"))
    assert table.primary_key == ["z"] and table.columns["z"].nullable is False


@pytest.mark.parametrize(("definition", "type_text"), [
    ("a TINYINT UNSIGNED", "tinyint unsigned"), ("a DECIMAL (6, 2) UNSIGNED", "decimal(6,2) unsigned"),
    ("a INT", "int"), ("a ENUM('x', 'y')", "enum('x','y')"),
])
def test_type_text_keeps_unsigned(definition: str, type_text: str) -> None:
    parsed = parse_column(definition)
    assert parsed is not None and parsed[1].type_text == type_text
