"""The `tableChanges` part of schema-change events, in Debezium's Connect shape."""

from __future__ import annotations

import re
from typing import Any

from connector.binlog.declared import Declared, DeclaredTable, split_top

# java.sql.Types codes Debezium's MySQL connector reports per declared type (measured).
JDBC_TYPES = {
    "tinyint": 5, "smallint": 5, "mediumint": 4, "int": 4, "integer": 4, "bigint": -5,
    "boolean": 16, "bool": 16, "decimal": 3, "numeric": 2, "float": 6, "double": 8,
    "real": 7, "bit": -7, "char": 1, "varchar": 12, "binary": -2, "varbinary": -3,
    "tinytext": 12, "text": 12, "mediumtext": 12, "longtext": 12, "tinyblob": 2004,
    "blob": 2004, "mediumblob": 2004, "longblob": 2004, "date": 91, "time": 92,
    "datetime": 93, "timestamp": 2014, "year": 4, "enum": 1, "set": 1,
    "nchar": -15, "nvarchar": -9, "int1": 5, "int2": 5, "int3": 4, "middleint": 4,
    "int4": 4, "int8": -5, "float4": 6, "float8": 8, "dec": 3, "fixed": 3,
}
# MySQL's other names of a type: the type whose length and charset rules they follow.
_SYNONYMS = {"double precision": "double", "character": "char", "character varying":
             "varchar", "char varying": "varchar", "national character": "nchar",
             "national char": "nchar", "national varchar": "nvarchar", "national character "
             "varying": "nvarchar", "national char varying": "nvarchar", "nchar varchar":
             "nvarchar", "nchar varying": "nvarchar", "long": "mediumtext", "long varchar":
             "mediumtext", "long varbinary": "mediumblob"}
_CHARSET_TYPES = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext",
                            "enum", "set"})
_NATIONAL = frozenset({"nchar", "nvarchar"})  # MySQL's national charset: utf8 for Debezium
_DECIMALS = frozenset({"decimal", "numeric", "dec", "fixed"})  # (10,0) unless declared


def _s(type_: str, optional: bool = True, field: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type_, "optional": optional}
    if field is not None:
        out["field"] = field
    return out


def _array(field: str, optional: bool, items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items, "optional": optional, "field": field}


COLUMN_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [
        _s("string", False, "name"), _s("int32", False, "jdbcType"),
        _s("int32", True, "nativeType"), _s("string", False, "typeName"),
        _s("string", True, "typeExpression"), _s("string", True, "charsetName"),
        _s("int32", True, "length"), _s("int32", True, "scale"), _s("int32", False, "position"),
        _s("boolean", True, "optional"), _s("boolean", True, "autoIncremented"),
        _s("boolean", True, "generated"), _s("string", True, "comment"),
        _s("string", True, "defaultValueExpression"),
        _array("enumValues", True, _s("string", False)),
    ],
    "optional": False, "name": "io.debezium.connector.schema.Column", "version": 1,
}
TABLE_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [
        _s("string", True, "defaultCharsetName"),
        _array("primaryKeyColumnNames", True, _s("string", False)),
        _array("columns", False, COLUMN_SCHEMA),
        _s("string", True, "comment"),
    ],
    "optional": True, "name": "io.debezium.connector.schema.Table", "version": 1,
}
CHANGE_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [_s("string", False, "type"), _s("string", False, "id"),
               {**TABLE_SCHEMA, "field": "table"}],
    "optional": False, "name": "io.debezium.connector.schema.Change", "version": 1,
}


def _column(position: int, column: str, col: Declared, table_charset: str | None
            ) -> dict[str, Any]:
    name = col.type_name
    base = _SYNONYMS.get(name, name)
    type_name = name.upper() + (" UNSIGNED" if " unsigned" in col.type_text else "") + (
        " ZEROFILL" if " zerofill" in col.type_text else "")
    paren = re.search(r"\((.*)\)", col.type_text)
    values = split_top(paren.group(1)) if paren and base in ("enum", "set") else []
    numbers = [int(n) for n in re.findall(r"\d+", paren.group(1))] if paren and not values \
        else []
    length: int | None = numbers[0] if numbers else None
    scale = numbers[1] if len(numbers) > 1 else None
    if base == "enum":  # Debezium 3.6's parser: 1 for an ENUM, members + commas for a SET
        length = 1
    elif base == "set":
        length = max(0, 2 * len(values) - 1)
    elif base in _DECIMALS:
        length, scale = length or 10, scale or 0
    charset = (col.charset or table_charset) if base in _CHARSET_TYPES else None
    expression = col.default_expression
    if expression is not None and expression.startswith("("):
        expression = None  # an expression DEFAULT (MySQL 8: `DEFAULT (uuid())`): none there
    return {
        "name": column, "jdbcType": JDBC_TYPES.get(base, 1111), "nativeType": None,
        "typeName": type_name, "typeExpression": type_name,
        "charsetName": "utf8" if base in _NATIONAL else charset,
        "length": length, "scale": scale,
        # Debezium's "generated" means auto-generated values (AUTO_INCREMENT), and comments
        # are left out (include.schema.comments=false, its default).
        "position": position, "optional": col.nullable, "autoIncremented": col.auto_increment,
        "generated": col.auto_increment, "comment": None,
        "defaultValueExpression": expression, "enumValues": values or None,
    }


def table_change(change_type: str, db: str, table: str, declared: DeclaredTable | None,
                 database_charset: str | None = None) -> dict[str, Any]:
    """One `tableChanges` entry (CREATE | ALTER | DROP) as Debezium writes it, from the
    table as its DDL declared it (`table` is null for DROP or a table never declared)."""
    structure = None
    if change_type != "DROP" and declared is not None:
        charset = declared.charset or database_charset
        structure = {
            "defaultCharsetName": charset,
            "primaryKeyColumnNames": list(declared.primary_key),
            "columns": [_column(i, name, col, charset)
                        for i, (name, col) in enumerate(declared.columns.items(), start=1)],
            "comment": None,
        }
    return {"type": change_type, "id": f'"{db}"."{table}"', "table": structure}


def history_change(change: dict[str, Any], previous_id: str | None = None) -> dict[str, Any]:
    """A `tableChanges` entry as Debezium's schema history stores it (its JSON table-change
    serializer: absent nulls, hasDefaultValue, attributes, the comment beside the table)."""
    table = change.get("table")
    if table is None:
        return {"type": change["type"], "id": change["id"]}
    columns = []
    for col in table["columns"]:
        doc = {k: col[k] for k in ("name", "jdbcType", "nativeType", "typeName",
                                   "typeExpression", "charsetName", "length", "scale",
                                   "position", "optional", "autoIncremented", "generated",
                                   "comment")
               if col[k] is not None or k in ("charsetName", "comment")}
        expression = col["defaultValueExpression"]
        doc["hasDefaultValue"] = expression is not None or (col["optional"] and
                                                            not col["autoIncremented"])
        if expression is not None:
            doc["defaultValueExpression"] = expression
        doc["enumValues"] = col["enumValues"] or []
        columns.append(doc)
    renamed = {} if previous_id is None else {"previousId": previous_id}
    return {"type": change["type"], "id": change["id"], **renamed,
            "table": {"defaultCharsetName": table["defaultCharsetName"],
                      "primaryKeyColumnNames": table["primaryKeyColumnNames"],
                      "columns": columns, "attributes": []},
            "comment": table["comment"]}


def history_changes(changes: list[dict[str, Any]], previous: list[str | None]
                    ) -> list[dict[str, Any]]:
    """A history record's `tableChanges`; empty when a CREATE or ALTER has no structure (a
    table whose DDL was not streamed here): Debezium's reader fails on such an entry, and
    with none it parses the record's `ddl` against the table as it knows it."""
    if any(c["type"] != "DROP" and c.get("table") is None for c in changes):
        return []
    return [history_change(c, p) for c, p in zip(changes, previous, strict=True)]
