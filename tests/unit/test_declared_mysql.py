"""MySQL DDL that connector/binlog/declared.py reads as Debezium 3.6.3's DDL parser does
(found by the MySQL conformance run and checked against the parser itself): type names of
several words, ENUM/SET members as written, hex and bit-literal DEFAULTs, column and index
visibility changes."""

from __future__ import annotations

import pytest

from connector.binlog.ddl import parse_ddl
from connector.binlog.declared import DeclaredColumns, with_declared
from connector.events.defaults import literal_value
from connector.events.history import table_change
from connector.schema import Column, TableSchema

CREATE = ("CREATE TABLE t (id INT PRIMARY KEY, dp DOUBLE PRECISION, e ENUM('x y', 'Ü'), "
          "vb VARBINARY(4) DEFAULT 0x0102, g9 BIT(9) DEFAULT b'100000001', "
          "h INT DEFAULT 4 INVISIBLE)")


def follow(*statements: str) -> DeclaredColumns:
    declared = DeclaredColumns()
    for sql in statements:
        declared.apply(sql, parse_ddl(sql, "app"))
    return declared


def columns(declared: DeclaredColumns) -> dict[str, dict[str, object]]:
    change = table_change("CREATE", "app", "t", declared.table("app.t"))
    return {c["name"]: c for c in change["table"]["columns"]}


def default_of(declared: DeclaredColumns, name: str, type_name: str) -> object:
    found = declared.get("app.t")
    assert found is not None
    return literal_value(Column(name, type_name, default=found[name].default))


def test_double_precision_keeps_its_name() -> None:
    dp = columns(follow(CREATE))["dp"]
    assert (dp["typeName"], dp["typeExpression"], dp["jdbcType"]) == \
        ("DOUBLE PRECISION", "DOUBLE PRECISION", 8)
    found = follow(CREATE).get("app.t")
    assert found is not None
    binlog = TableSchema("app", "t", tuple(Column(n, "double" if n == "dp" else "int")
                                           for n in found), ())
    refined = with_declared(binlog, found)  # the value is still decoded as a DOUBLE
    assert refined is not None and refined.columns[1].type_name == "double"


def test_types_of_several_words_and_synonyms() -> None:
    declared = follow("CREATE TABLE t (a DOUBLE PRECISION(10,2) UNSIGNED, "
                      "b CHARACTER VARYING(10), c NATIONAL CHAR(3), d NCHAR VARYING(4), "
                      "e LONG VARBINARY, f BOOL, g NUMERIC(6,2), h DECIMAL, i INT8, "
                      "j CHAR(2) CHARACTER SET latin1) DEFAULT CHARSET=latin1")
    got = {n: (c["typeName"], c["jdbcType"], c["length"], c["scale"], c["charsetName"])
           for n, c in columns(declared).items()}
    assert got == {
        "a": ("DOUBLE PRECISION UNSIGNED", 8, 10, 2, None),
        "b": ("CHARACTER VARYING", 12, 10, None, "latin1"),
        "c": ("NATIONAL CHAR", -15, 3, None, "utf8"),
        "d": ("NCHAR VARYING", -9, 4, None, "utf8"),
        "e": ("LONG VARBINARY", 2004, None, None, None),
        "f": ("BOOL", 16, None, None, None),
        "g": ("NUMERIC", 2, 6, 2, None),
        "h": ("DECIMAL", 3, 10, 0, None),
        "i": ("INT8", -5, None, None, None),
        "j": ("CHAR", 1, 2, None, "latin1"),
    }


def test_enum_members_as_written() -> None:
    assert columns(follow(CREATE))["e"]["enumValues"] == ["'x y'", "'Ü'"]
    declared = follow("CREATE TABLE t (e ENUM('it''s', 'a  b', '#c', 'p)q') "
                      "DEFAULT 'it''s', s SET('A', 'b'))")
    got = columns(declared)
    assert got["e"]["enumValues"] == ["'it''s'", "'a  b'", "'#c'", "'p)q'"]
    assert got["e"]["defaultValueExpression"] == "it's"
    assert (got["s"]["enumValues"], got["s"]["length"]) == (["'A'", "'b'"], 3)


def test_a_hex_default_is_its_bytes() -> None:
    declared = follow(CREATE)
    assert default_of(declared, "vb", "varbinary") == b"\x01\x02"
    # Debezium's parser reads 0x0102 as "010"; we keep the digits (compare.py allows it)
    assert columns(declared)["vb"]["defaultValueExpression"] == "0102"


@pytest.mark.parametrize(("definition", "type_name", "value", "expression"), [
    ("v VARBINARY(4) DEFAULT X'0102'", "varbinary", b"\x01\x02", "0102"),
    ("v BINARY(1) DEFAULT x'0A'", "binary", b"\n", "0A"),
    ("v VARCHAR(3) DEFAULT 0x616263", "varchar", "abc", "616263"),
    ("v INT DEFAULT 0x10", "int", 16, "10"),
    ("v BIT(8) DEFAULT 0x0F", "bit", 15, "0F"),
    ("v VARBINARY(2) DEFAULT 0xFF", "varbinary", None, "FF"),  # no text: as the catalog
    ("v VARBINARY(2) DEFAULT 0x27", "varbinary", b"'", "27"),
])
def test_hex_defaults(definition: str, type_name: str, value: object,
                      expression: str) -> None:
    declared = follow(f"CREATE TABLE t ({definition})")
    assert default_of(declared, "v", type_name) == value
    assert columns(declared)["v"]["defaultValueExpression"] == expression


def test_a_bit_default_expression_keeps_its_digits() -> None:
    declared = follow(CREATE, "ALTER TABLE t ADD COLUMN g1 BIT(1) DEFAULT b'1', "
                      "ADD COLUMN g4 BIT(4) DEFAULT B'0010', ADD COLUMN g3 BIT(3) DEFAULT 0b101")
    got = columns(declared)
    assert [got[n]["defaultValueExpression"] for n in ("g9", "g1", "g4", "g3")] == \
        ["100000001", "1", "0010", "101"]
    assert [default_of(declared, n, "bit") for n in ("g9", "g1", "g4", "g3")] == \
        [257, 1, 2, 5]


def test_alter_column_set_default_to_a_hex_literal() -> None:
    declared = follow(CREATE, "ALTER TABLE t ALTER COLUMN vb SET DEFAULT x'41'")
    assert default_of(declared, "vb", "varbinary") == b"A"


@pytest.mark.parametrize("alter", [
    "ALTER TABLE t ALTER COLUMN h SET VISIBLE",
    "ALTER TABLE t ALTER COLUMN h SET INVISIBLE, ALTER h SET VISIBLE",
    "ALTER TABLE t ADD INDEX k (h), ALTER INDEX k INVISIBLE",
])
def test_a_visibility_change_keeps_the_table(alter: str) -> None:
    declared = follow(CREATE, alter)
    assert declared.table("app.t") is not None
    assert columns(declared)["h"]["defaultValueExpression"] == "4"
