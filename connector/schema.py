"""The table model every other module codes against, built from the binlog or the catalog.

`schema_from_table_map` reads a mysql-replication TableMapEvent (binlog_row_metadata=FULL);
`schema_from_information_schema` is the snapshot's fallback. Both give equal `TableSchema`s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pymysqlreplication.constants import FIELD_TYPE

INTEGER_TYPES = frozenset({"tinyint", "smallint", "mediumint", "int", "bigint"})
SIGNED_TYPES = INTEGER_TYPES | {"decimal", "float", "double"}
TEMPORAL_SCALE_TYPES = frozenset({"time", "datetime", "timestamp"})
GEOMETRY_TYPES = frozenset({
    "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
    "multipolygon", "geometrycollection", "geomcollection",
})
TEXT_TYPES = {1: "tinytext", 2: "text", 3: "mediumtext", 4: "longtext"}
BLOB_TYPES = {1: "tinyblob", 2: "blob", 3: "mediumblob", 4: "longblob"}
# Bytes per character, to turn a binlog byte length into the declared CHAR(n) length.
MB_MAXLEN = {
    "utf8mb4": 4, "utf8mb3": 3, "utf8": 3, "ucs2": 2, "utf16": 4, "utf16le": 4, "utf32": 4,
    "big5": 2, "cp932": 2, "eucjpms": 3, "euckr": 2, "gb2312": 2, "gbk": 2, "gb18030": 4,
    "sjis": 2, "ujis": 3,
}
_SIMPLE_CODES = {
    FIELD_TYPE.TINY: "tinyint", FIELD_TYPE.SHORT: "smallint", FIELD_TYPE.INT24: "mediumint",
    FIELD_TYPE.LONG: "int", FIELD_TYPE.LONGLONG: "bigint", FIELD_TYPE.NEWDECIMAL: "decimal",
    FIELD_TYPE.DECIMAL: "decimal", FIELD_TYPE.FLOAT: "float", FIELD_TYPE.DOUBLE: "double",
    FIELD_TYPE.BIT: "bit", FIELD_TYPE.DATE: "date", FIELD_TYPE.NEWDATE: "date",
    FIELD_TYPE.TIME: "time", FIELD_TYPE.TIME2: "time", FIELD_TYPE.DATETIME: "datetime",
    FIELD_TYPE.DATETIME2: "datetime", FIELD_TYPE.TIMESTAMP: "timestamp",
    FIELD_TYPE.TIMESTAMP2: "timestamp", FIELD_TYPE.YEAR: "year", FIELD_TYPE.ENUM: "enum",
    FIELD_TYPE.SET: "set", FIELD_TYPE.JSON: "json", FIELD_TYPE.GEOMETRY: "geometry",
}


@dataclass(frozen=True, slots=True)
class Column:
    """One column as Debezium needs it; hashable so encoders can be cached per table."""

    name: str
    type_name: str
    unsigned: bool = False
    nullable: bool = True
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    values: tuple[str, ...] = ()
    charset: str | None = None
    # The DEFAULT as information_schema.COLUMNS.COLUMN_DEFAULT writes it (MariaDB: literals
    # quoted, expressions bare); None when there is none or it is not known.
    default: str | None = None
    # The type as the streamed DDL or the catalog (COLUMN_TYPE, SHOW CREATE TABLE's form)
    # writes it, lowercase: `int(11) unsigned`; None from the binlog alone. Not compared: the
    # binlog's and the catalog's schemas of one table version stay equal.
    type_text: str | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class TableSchema:
    """A table's columns in ordinal order and its primary key (empty tuple when none)."""

    db: str
    table: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.db}.{self.table}"

    def column(self, name: str) -> Column:
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(f"{self.id} has no column {name!r}")


def _charset_of_collation(collation: str | None) -> str | None:
    if not collation or collation == "binary":
        return None
    return collation.split("_", 1)[0]


def _chars(byte_length: int, charset: str | None) -> int:
    return byte_length // MB_MAXLEN.get(charset or "", 1)


def _binlog_column(col: Any, nullable: bool) -> Column:
    code = col.type
    charset = _charset_of_collation(getattr(col, "collation_name", None))
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    values: tuple[str, ...] = ()
    if getattr(col, "vector", False):  # MySQL 9's VECTOR, read as a BLOB (events/decoding)
        type_name = "vector"
    elif code == FIELD_TYPE.STRING:
        type_name = "char" if charset else "binary"
        length = _chars(col.max_length, charset)
    elif code in (FIELD_TYPE.VARCHAR, FIELD_TYPE.VAR_STRING):
        type_name = "varchar" if charset else "varbinary"
        length = _chars(col.max_length, charset)
    elif code in (FIELD_TYPE.BLOB, FIELD_TYPE.TINY_BLOB, FIELD_TYPE.MEDIUM_BLOB,
                  FIELD_TYPE.LONG_BLOB):
        size = getattr(col, "length_size", 2)
        type_name = TEXT_TYPES[size] if charset else BLOB_TYPES[size]
    elif code in _SIMPLE_CODES:
        type_name = _SIMPLE_CODES[code]
    else:
        raise ValueError(f"column {col.name!r}: unsupported binlog column type code {code}")
    if type_name == "decimal":
        precision, scale = col.precision, col.decimals
    elif type_name in TEMPORAL_SCALE_TYPES:
        scale = getattr(col, "fsp", 0) or 0
    elif type_name == "bit":
        length = col.bits
    elif type_name == "enum":
        values = tuple((col.enum_values or [""])[1:])
    elif type_name == "set":
        values = tuple(col.set_values or ())
    if type_name == "geometry":
        charset = None
    return Column(
        name=col.name, type_name=type_name,
        unsigned=bool(col.unsigned) and type_name in SIGNED_TYPES, nullable=nullable,
        length=length, precision=precision, scale=scale, values=values,
        charset=charset if type_name in _CHARSET_TYPES else None,
    )


_CHARSET_TYPES = frozenset({"char", "varchar", "enum", "set"}) | frozenset(TEXT_TYPES.values())


def schema_from_table_map(event: Any) -> TableSchema:
    """The table model carried by a TableMapEvent (needs binlog_row_metadata=FULL for names)."""
    mask: bytes = event.null_bitmask
    columns = []
    for i, col in enumerate(event.columns):
        if not col.name:
            raise ValueError(f"{event.schema}.{event.table}: column names missing from the "
                             "table map (set binlog_row_metadata=FULL)")
        nullable = bool(mask[i // 8] & (1 << (i % 8)))
        columns.append(_binlog_column(col, nullable))
    meta = event.optional_metadata
    columns = _with_points(columns, list(getattr(meta, "geometry_type_list", None) or []))
    pk_index = list(meta.simple_primary_key_list or []) or list(meta.primary_keys_with_prefix or {})
    primary_key = tuple(event.columns[i].name for i in pk_index)
    return TableSchema(event.schema, event.table, tuple(columns), primary_key)


_shared_schemas: dict[tuple[Any, ...], TableSchema] = {}  # one model per table version


_COLUMN_DETAILS = ("name", "type", "unsigned", "collation_name", "max_length", "length_size",
                   "precision", "decimals", "fsp", "bits", "vector")


def _table_map_signature(event: Any) -> tuple[Any, ...]:
    """Everything schema_from_table_map reads: two maps with it equal give the same model
    (names and types alone missed a new primary key, ENUM members, precision, nullability)."""
    meta = event.optional_metadata
    return (event.schema, event.table, bytes(event.null_bitmask),
            tuple((*(getattr(c, a, None) for a in _COLUMN_DETAILS),
                   tuple(getattr(c, "enum_values", None) or ()),
                   tuple(getattr(c, "set_values", None) or ())) for c in event.columns),
            tuple(getattr(meta, "geometry_type_list", None) or ()),
            tuple(meta.simple_primary_key_list or ()),
            tuple(sorted((meta.primary_keys_with_prefix or {}).items())))


def shared_schema_from_table_map(event: Any) -> TableSchema:
    """schema_from_table_map, the same object for every map of one table version (a new
    table id after FLUSH TABLES is not a new version): encoders are cached per model."""
    signature = _table_map_signature(event)
    found = _shared_schemas.get(signature)
    if found is None:
        found = _shared_schemas[signature] = schema_from_table_map(event)
    return found


GEOMETRY_POINT = 1  # binlog GEOMETRY_TYPE metadata code of POINT


def _with_points(columns: list[Column], geometry_types: list[int]) -> list[Column]:
    """POINT columns (Debezium's Point struct) from the table map's geometry types."""
    codes = iter(geometry_types)
    out = []
    for col in columns:
        if col.type_name == "geometry" and next(codes, None) == GEOMETRY_POINT:
            col = Column(col.name, "point", nullable=col.nullable)
        out.append(col)
    return out


_QUOTED = re.compile(r"'((?:[^'\\]|''|\\.)*)'")


def parse_enum_values(column_type: str) -> tuple[str, ...]:
    """Members of `enum('a','b')` / `set(...)` as information_schema.COLUMN_TYPE writes them."""
    body = column_type[column_type.index("(") + 1: column_type.rindex(")")]
    return tuple(m.group(1).replace("''", "'").replace("\\\\", "\\")
                 for m in _QUOTED.finditer(body))


def _catalog_column(row: dict[str, Any]) -> Column:
    data_type = str(row["DATA_TYPE"]).lower()
    column_type = str(row["COLUMN_TYPE"]).lower()
    type_name = data_type
    if data_type in GEOMETRY_TYPES and data_type != "point":
        type_name = "geometry"
    charset = row["CHARACTER_SET_NAME"]
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    values: tuple[str, ...] = ()
    if type_name in ("char", "varchar", "binary", "varbinary"):
        length = int(row["CHARACTER_MAXIMUM_LENGTH"])
    elif type_name == "bit":
        length = int(row["NUMERIC_PRECISION"])
    elif type_name == "decimal":
        precision, scale = int(row["NUMERIC_PRECISION"]), int(row["NUMERIC_SCALE"])
    elif type_name in TEMPORAL_SCALE_TYPES:
        scale = int(row["DATETIME_PRECISION"] or 0)
    elif type_name in ("enum", "set"):
        values = parse_enum_values(str(row["COLUMN_TYPE"]))
    elif type_name == "float" and (m := _FLOAT_M_D.search(column_type)):
        precision, scale = int(m.group(1)), int(m.group(2))  # FLOAT(M,D): a double for Debezium
    default = row.get("COLUMN_DEFAULT")
    return Column(
        name=str(row["COLUMN_NAME"]), type_name=type_name,
        unsigned="unsigned" in column_type and type_name in SIGNED_TYPES,
        nullable=row["IS_NULLABLE"] == "YES", length=length, precision=precision, scale=scale,
        values=values, charset=str(charset) if charset and type_name in _CHARSET_TYPES else None,
        default=None if default is None or default == "NULL" else str(default),
        type_text=column_type,
    )


_FLOAT_M_D = re.compile(r"^float\((\d+),(\d+)\)")
def with_catalog_details(schema: TableSchema, catalog: TableSchema) -> TableSchema | None:
    """`schema` (from the binlog) with DEFAULTs and FLOAT(M,D) from `catalog` (what
    Debezium reads from SHOW CREATE TABLE for a table whose DDL it did not stream).

    None when the catalog's columns are not the binlog's (names, types, nullability): the
    catalog is then at another version of the table, and nothing of it is used.
    """
    if len(schema.columns) != len(catalog.columns):
        return None
    columns = []
    for ours, theirs in zip(schema.columns, catalog.columns, strict=True):
        same_type = ours.type_name == theirs.type_name or (
            {ours.type_name, theirs.type_name} <= {"geometry", "point"})
        if ours.name != theirs.name or not same_type or ours.nullable != theirs.nullable:
            return None
        precision, scale = ours.precision, ours.scale
        if ours.type_name == "float":
            precision, scale = theirs.precision, theirs.scale
        type_name = theirs.type_name if theirs.type_name == "point" else ours.type_name
        columns.append(Column(ours.name, type_name, ours.unsigned, ours.nullable, ours.length,
                              precision, scale, ours.values, ours.charset, theirs.default,
                              theirs.type_text))
    return TableSchema(schema.db, schema.table, tuple(columns), schema.primary_key)


def _mysql_default(row: dict[str, Any]) -> Any:
    """MySQL's COLUMN_DEFAULT in MariaDB's form (the one Column.default holds): MySQL quotes
    no literal ('it''s' reads it's), writes a binary one in hex (0x6162) and marks an
    expression in EXTRA (DEFAULT_GENERATED) instead."""
    raw = row["COLUMN_DEFAULT"]
    if raw is None or "DEFAULT_GENERATED" in str(row.get("EXTRA") or "").upper():
        return raw
    text = raw.decode() if isinstance(raw, bytes) else str(raw)
    if text[:2].lower() == "b'":
        return text
    if text[:2].lower() == "0x" and str(row["DATA_TYPE"]).lower() in BINARY_TYPE_NAMES:
        try:
            text = bytes.fromhex(text[2:]).decode("utf-8")
        except ValueError:
            return None  # bytes no text holds: no default rather than a wrong one
    return "'" + text.replace("'", "''") + "'"


BINARY_TYPE_NAMES = frozenset({"binary", "varbinary"}) | frozenset(BLOB_TYPES.values())


def schema_from_information_schema(conn: Any, db: str, table: str) -> TableSchema:
    """Fallback for the snapshot before any table map was seen; same result as the binlog's."""
    with conn.cursor() as cur:
        cur.execute("SHOW GLOBAL VARIABLES LIKE 'gtid_binlog_pos'")
        mysql = not cur.fetchall()  # as connector.flavours.server_flavour tells them apart
        cur.execute(
            "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, CHARACTER_MAXIMUM_LENGTH, "
            "NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION, CHARACTER_SET_NAME, "
            "IS_NULLABLE, COLUMN_DEFAULT, EXTRA FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION", (db, table))
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        if mysql:
            rows = [{**r, "COLUMN_DEFAULT": _mysql_default(r)} for r in rows]
        cur.execute(
            "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s "
            "AND TABLE_NAME = %s AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX", (db, table))
        primary_key = tuple(str(r[0]) for r in cur.fetchall())
    if not rows:
        raise LookupError(f"table {db}.{table} not found in information_schema")
    return TableSchema(db, table, tuple(_catalog_column(r) for r in rows), primary_key)
