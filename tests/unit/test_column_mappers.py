"""Column mappers, column lists and message keys as the encoder applies them (Debezium's
rules; the conformance run `test_column_settings.py` holds them to the real Debezium)."""

from __future__ import annotations

import base64
import decimal
import hashlib
import json
from typing import Any

from connector.events import EventEncoder
from connector.events.column_mappers import SourceColumn, java_serialized_string, source_column
from connector.schema import Column, TableSchema
from tests.unit.test_envelope import SOURCE, config

TABLE = TableSchema("shop", "people", (
    Column("id", "int", nullable=False),
    Column("email", "varchar", length=40, charset="utf8mb4"),
    Column("note", "text", charset="utf8mb4"),
    Column("code", "char", length=8, charset="utf8mb4"),
    Column("secret", "varchar", length=10, charset="utf8mb4"),
    Column("amount", "decimal", precision=10, scale=2),
    Column("n", "int"),
), ("id",))
ROW = {"id": 1, "email": "ann@example.com", "note": "a" * 30, "code": "AB12",
       "secret": "hunter2", "amount": None, "n": 5}


def _encoded(**settings: Any) -> tuple[Any, Any, Any]:
    enc = EventEncoder(config(**settings)).table(TABLE)
    value = json.loads(enc.value("c", None, ROW, SOURCE, 1))
    key = enc.key(ROW)
    fields = {f["field"]: f for f in value["schema"]["fields"][1]["fields"]}
    return value["payload"]["after"], fields, None if key is None else json.loads(key)


def test_mask_replaces_string_values_and_null_but_not_other_types() -> None:
    after, fields, key = _encoded(**{"column.mask.with.5.chars": r"shop\.people\.(email|n)"})
    assert after["email"] == "*****" and after["n"] == 5
    assert fields["email"]["parameters"] == {"masked": "true"}
    assert fields["n"]["parameters"] == {"masked": "true"}  # the schema says so all the same
    nulls = EventEncoder(config(**{"column.mask.with.5.chars": "shop.people.email"})).table(TABLE)
    row = {**ROW, "email": None}
    assert json.loads(nulls.value("c", None, row, SOURCE, 1))["payload"]["after"]["email"] == \
        "*****"
    assert key["payload"] == {"id": 1}


def test_truncate_only_where_the_column_can_hold_more() -> None:
    after, fields, _ = _encoded(**{"column.truncate.to.20.chars": "shop.people.*"})
    assert after["note"] == "a" * 20 and after["email"] == "ann@example.com"
    assert fields["note"]["parameters"] == {"truncateLength": "20"}
    assert fields["email"]["parameters"] == {"truncateLength": "20"}  # VARCHAR(40) > 20
    assert "parameters" not in fields["code"]  # CHAR(8) holds no more than 20


def test_hash_v1_hashes_the_java_serialized_string_cut_to_the_column_length() -> None:
    salt = "CzQMA0cB5K"
    after, _, _ = _encoded(**{f"column.mask.hash.SHA-256.with.salt.{salt}": "shop.people.secret",
                              f"column.mask.hash.v2.SHA-256.with.salt.{salt}": "shop.people.email"})
    v1 = hashlib.sha256(salt.encode() + b"\xac\xed\x00\x05t\x00\x07hunter2").hexdigest()
    assert after["secret"] == v1[:10]
    assert after["email"] == hashlib.sha256((salt + "ann@example.com").encode()).hexdigest()[:40]


def test_java_serialization_uses_modified_utf8() -> None:
    assert java_serialized_string("\x00é😀") == (
        b"\xac\xed\x00\x05t\x00\x0a" + b"\xc0\x80" + b"\xc3\xa9" + b"\xed\xa0\xbd\xed\xb8\x80")


def test_first_rule_wins_in_debeziums_family_order() -> None:
    after, fields, _ = _encoded(**{"column.mask.with.3.chars": "shop.people.email",
                                   "column.truncate.to.4.chars": "shop.people.email",
                                   "column.propagate.source.type": "shop.people.*"})
    assert after["email"] == "ann@"  # truncate rules come before mask rules
    assert fields["email"]["parameters"] == {"truncateLength": "4"}
    assert fields["amount"]["parameters"] == {
        "scale": "2", "connect.decimal.precision": "10",
        "__debezium.source.column.type": "DECIMAL", "__debezium.source.column.length": "10",
        "__debezium.source.column.scale": "2", "__debezium.source.column.name": "amount"}


def test_datatype_propagation_matches_db_table_type() -> None:
    _, fields, _ = _encoded(**{"datatype.propagate.source.type": r".+\.CHAR"})
    assert fields["code"]["parameters"] == {
        "__debezium.source.column.type": "CHAR", "__debezium.source.column.length": "8",
        "__debezium.source.column.name": "code"}
    assert "parameters" not in fields["email"]


def test_column_include_list_keeps_the_key_whole() -> None:
    after, _, key = _encoded(**{"column.include.list": "shop.people.email"})
    assert after == {"email": "ann@example.com"} and key["payload"] == {"id": 1}


def test_message_key_columns_replace_the_primary_key_in_rule_order() -> None:
    _, _, key = _encoded(**{"message.key.columns": "shop.people:code,email;other.t:x"})
    assert key["payload"] == {"code": "AB12", "email": "ann@example.com"}
    assert [f["field"] for f in key["schema"]["fields"]] == ["code", "email"]
    _, _, unmatched = _encoded(**{"message.key.columns": "other.t:x"})
    assert unmatched["payload"] == {"id": 1}
    _, _, spaced = _encoded(**{"message.key.columns": "other.t:x; shop.people:code"})
    assert spaced["payload"] == {"id": 1}  # Debezium's regex keeps the space: no match


def test_integer_lengths_follow_show_create_table_of_the_flavour() -> None:
    """MariaDB writes int(11) / smallint(5) unsigned, MySQL 8 int: Debezium's length."""
    qty = Column("qty", "smallint", unsigned=True)
    assert source_column(qty, integer_widths=True).length == 5
    assert source_column(qty, integer_widths=False).length is None
    assert source_column(qty, integer_widths=False).type_name == "SMALLINT UNSIGNED"
    assert source_column(Column("e", "set", values=("a", "b", "c")), False).length == 5


def test_truncate_cuts_binary_columns_only_among_byte_values() -> None:
    """Debezium cuts Strings and ByteBuffers (BINARY/BLOB); a DECIMAL (BigDecimal) or BIT
    (byte[]) value passes whole, though its schema gets truncateLength."""
    table = TableSchema("shop", "t", (
        Column("id", "int", nullable=False), Column("amount", "decimal", precision=10, scale=2),
        Column("flags", "bit", length=16), Column("photo", "blob")), ("id",))
    enc = EventEncoder(config(**{"column.truncate.to.1.chars": "shop.t.*"})).table(table)
    row = {"id": 1, "amount": decimal.Decimal("12345.67"), "flags": 0x0102, "photo": b"abc"}
    value = json.loads(enc.value("c", None, row, SOURCE, 1))
    fields = {f["field"]: f for f in value["schema"]["fields"][1]["fields"]}
    after = value["payload"]["after"]
    assert after["amount"] == base64.b64encode((1234567).to_bytes(3, "big")).decode()
    assert after["flags"] == base64.b64encode(b"\x02\x01").decode()
    assert after["photo"] == base64.b64encode(b"a").decode()
    assert fields["amount"]["parameters"]["truncateLength"] == "1"


def test_declared_type_text_gives_debeziums_length() -> None:
    """A width declared otherwise than the flavour's default (the streamed DDL or the
    catalog's COLUMN_TYPE says it) and a DDL's bare INT (no length), as Debezium parses."""
    assert source_column(Column("f", "tinyint", type_text="tinyint(1)"), True).length == 1
    assert source_column(Column("n", "int", type_text="int"), True).length is None
    zero = Column("z", "int", unsigned=True, type_text="int(5) unsigned zerofill")
    assert source_column(zero, False) == SourceColumn("INT UNSIGNED ZEROFILL", 5, None)
    assert source_column(Column("d", "double", type_text="double(10,4)"), False) == \
        SourceColumn("DOUBLE", 10, 4)
