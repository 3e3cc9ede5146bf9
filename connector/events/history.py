"""The `tableChanges` part of schema-change events, in Debezium's Connect shape."""

from __future__ import annotations

from typing import Any

from connector.schema import Column, TableSchema

# java.sql.Types codes Debezium's MySQL connector reports per type name.
JDBC_TYPES = {
    "tinyint": -6, "smallint": 5, "mediumint": 4, "int": 4, "bigint": -5, "decimal": 3,
    "float": 7, "double": 8, "bit": -7, "char": 1, "varchar": 12, "binary": -2,
    "varbinary": -3, "tinytext": 12, "text": 12, "mediumtext": 12, "longtext": 12,
    "tinyblob": -3, "blob": 2004, "mediumblob": 2004, "longblob": 2004, "date": 91,
    "time": 92, "datetime": 93, "timestamp": 2014, "year": 4, "enum": 1, "set": 1,
    "json": 1, "geometry": 1111,
}


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


def _type_expression(col: Column) -> str:
    name = col.type_name.upper()
    if col.type_name == "decimal":
        return f"{name}({col.precision},{col.scale})"
    if col.values:
        return name + "(" + ",".join("'" + v.replace("'", "''") + "'" for v in col.values) + ")"
    if col.length is not None:
        return f"{name}({col.length})"
    if col.scale:
        return f"{name}({col.scale})"
    return name + (" UNSIGNED" if col.unsigned else "")


def table_change(schema: TableSchema, change_type: str = "ALTER") -> dict[str, Any]:
    """One `tableChanges` entry (type CREATE | ALTER | DROP) describing `schema`."""
    columns = []
    for position, col in enumerate(schema.columns, start=1):
        length = col.precision if col.type_name == "decimal" else col.length
        columns.append({
            "name": col.name, "jdbcType": JDBC_TYPES.get(col.type_name, 1111),
            "nativeType": None,
            "typeName": col.type_name.upper() + (" UNSIGNED" if col.unsigned else ""),
            "typeExpression": _type_expression(col), "charsetName": col.charset,
            "length": length, "scale": col.scale, "position": position,
            "optional": col.nullable, "autoIncremented": False, "generated": False,
            "comment": None, "defaultValueExpression": None,
            "enumValues": list(col.values) if col.values else None,
        })
    return {
        "type": change_type,
        "id": f'"{schema.db}"."{schema.table}"',
        "table": None if change_type == "DROP" else {
            "defaultCharsetName": next((c.charset for c in schema.columns if c.charset), None),
            "primaryKeyColumnNames": list(schema.primary_key),
            "columns": columns,
            "comment": None,
        },
    }
