"""Column declarations (type as written, DEFAULT) kept from the DDL statements streamed.

The table map gives names and storage types only. Debezium's schemas also follow what the
DDL said: a column's DEFAULT, FLOAT(M,D) as a double, BOOLEAN, REAL, JSON. This module
reads those from CREATE/ALTER/RENAME/DROP TABLE statements as they stream, table by table;
an unrecognised statement forgets the table (its details then come from the catalog).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from connector.binlog.ddl import DdlChange, strip_comments
from connector.binlog.declared_defaults import catalog_default, default_expression, find_default
from connector.schema import Column, TableSchema

_IDENT = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_SKIP_ITEM = re.compile(r"^(?:PRIMARY|KEY|INDEX|UNIQUE|CONSTRAINT|FOREIGN|FULLTEXT|SPATIAL|"
                        r"CHECK|PERIOD)\b", re.IGNORECASE)
_FLAGS = re.compile(r"(?:\s+(?:UNSIGNED|SIGNED|ZEROFILL)\b)*", re.IGNORECASE)
# MySQL's types of several words: the words that may follow each (DOUBLE PRECISION,
# NATIONAL CHARACTER VARYING, LONG VARBINARY...), as Debezium's parser names them.
_NEXT_WORDS = {"double": ("precision",), "character": ("varying",), "char": ("varying",),
               "national": ("character", "char", "varchar"), "nchar": ("varchar", "varying"),
               "long": ("varchar", "varbinary")}
_OWN_WORDS = re.compile(r"^[^(]*?(?=\(|\s+(?:unsigned|signed|zerofill)\b|$)")
_I = re.IGNORECASE


@dataclass(frozen=True, slots=True)
class Declared:
    """One column as its DDL wrote it: type text (lowercase, ENUM/SET members as written),
    DEFAULT in catalog form, and what Debezium's schema-change `table` structure reports."""

    type_text: str
    default: str | None
    nullable: bool = True
    auto_increment: bool = False
    charset: str | None = None
    default_expression: str | None = None  # as Debezium's parser writes it
    primary_key: bool = False

    @property
    def type_name(self) -> str:
        """The type's own words, lowercase (`double precision`): no length, members, flags."""
        match = _OWN_WORDS.match(self.type_text)
        return match.group(0) if match else self.type_text


@dataclass(slots=True)
class DeclaredTable:
    """A table as its DDL declared it: columns in order, key, default charset."""

    columns: dict[str, Declared]
    primary_key: list[str]
    charset: str | None = None


def _unquote(ident: str) -> str:
    ident = ident.strip()
    if ident.startswith("`") and ident.endswith("`"):
        return ident[1:-1].replace("``", "`")
    return ident


def _unquoted(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """(index, character, parenthesis depth after it) of each character outside quotes."""
    depth, quote = 0, ""
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        else:
            depth += (ch == "(") - (ch == ")")
            yield i, ch, depth


def split_top(body: str) -> list[str]:
    """Split on commas outside parentheses and quotes."""
    parts, start = [], 0
    for i, ch, depth in _unquoted(body):
        if ch == "," and depth == 0:
            parts.append(body[start:i].strip())
            start = i + 1
    parts.append(body[start:].strip())
    return [p for p in parts if p]


def _closing(text: str, start: int) -> int:
    """The index of the parenthesis closing the one at `start` (quotes skipped); -1: none."""
    return next((i for i, ch, depth in _unquoted(text, start) if ch == ")" and depth == 0), -1)


def _read_type(rest: str) -> tuple[str, str] | None:
    """`type[(...)] [UNSIGNED|ZEROFILL] attributes` -> (type text, attributes): the type's
    words lowercase with one blank between, ENUM/SET members as written, blanks out."""
    first = re.match(r"\w+", rest)
    if first is None:
        return None
    words, end = [first.group(0).lower()], first.end()
    while (more := re.match(r"\s+(\w+)", rest[end:])) \
            and more.group(1).lower() in _NEXT_WORDS.get(words[-1], ()):
        words.append(more.group(1).lower())
        end += more.end()
    type_text = " ".join(words)
    if paren := re.match(r"\s*\(", rest[end:]):
        close = _closing(rest, end + paren.end() - 1)
        if close < 0:
            return None
        inner = rest[end + paren.end():close]
        members = words[0] in ("enum", "set")
        type_text += "(" + (",".join(split_top(inner)) if members
                            else "".join(inner.split()).lower()) + ")"
        end = close + 1
    flags = _FLAGS.match(rest, end)
    if flags is not None and flags.group(0).strip():
        type_text += " " + " ".join(flags.group(0).lower().split())
        end = flags.end()
    return type_text, rest[end:]


def parse_column(text: str) -> tuple[str, Declared] | None:
    """`name type [attributes]` -> (name, Declared); None for keys and constraints."""
    if _SKIP_ITEM.match(text):
        return None
    match = re.match(rf"^({_IDENT})\s+(.*)$", text, re.DOTALL)
    if match is None or (typed := _read_type(match.group(2))) is None:
        return None
    type_text, attributes = typed
    raw = find_default(attributes)
    charset = re.search(r"\b(?:CHARACTER\s+SET|CHARSET)\s*=?\s*(\w+)", attributes, _I)
    primary = bool(re.search(r"\bPRIMARY\s+KEY\b", attributes, _I))
    return _unquote(match.group(1)), Declared(
        type_text, catalog_default(raw, type_text) if raw else None,
        nullable=not primary and not re.search(r"\bNOT\s+NULL\b", attributes, _I),
        auto_increment=bool(re.search(r"\bAUTO_INCREMENT\b", attributes, _I)),
        charset=charset.group(1).lower() if charset else None,
        default_expression=default_expression(raw, type_text), primary_key=primary)


def with_declared(schema: TableSchema,
                  declared: dict[str, Declared]) -> TableSchema | None:
    """`schema` with each column's DEFAULT and declared type (FLOAT(M,D), BOOLEAN, REAL,
    JSON) as Debezium's DDL parser reads them; None when the DDL's columns are not these."""
    if set(declared) != {c.name for c in schema.columns}:
        return None
    columns = []
    for col in schema.columns:
        decl = declared[col.name]
        base = re.split(r"[\s(]", decl.type_text, maxsplit=1)[0]
        type_name, precision, scale = col.type_name, col.precision, col.scale
        if base == "float" and (md := re.match(r"^float\((\d+),(\d+)\)", decl.type_text)):
            precision, scale = int(md.group(1)), int(md.group(2))
        elif base in ("boolean", "bool") and col.type_name == "tinyint":
            type_name = "boolean"
        elif base == "real" and col.type_name == "double":
            type_name = "float"  # Debezium's MySQL parser reads REAL as FLOAT
        elif base == "json" and col.type_name in ("longtext", "json"):
            type_name = "json"
        columns.append(Column(col.name, type_name, col.unsigned, col.nullable, col.length,
                              precision, scale, col.values, col.charset, decl.default,
                              decl.type_text))
    return TableSchema(schema.db, schema.table, tuple(columns), schema.primary_key)


class DeclaredColumns:
    """Per table (`db.table`), its columns as the streamed DDL declared them."""

    def __init__(self) -> None:
        self.tables: dict[str, DeclaredTable] = {}
        # The database's default charset (a table without its own); set by the engine.
        self.charset_lookup: Callable[[str], str | None] | None = None
        self._charsets: dict[str, str | None] = {}

    def database_charset(self, db: str) -> str | None:
        if db not in self._charsets and self.charset_lookup is not None:
            self._charsets[db] = self.charset_lookup(db)
        return self._charsets.get(db)

    def get(self, table_id: str) -> dict[str, Declared] | None:
        found = self.tables.get(table_id)
        return None if found is None else found.columns

    def table(self, table_id: str) -> DeclaredTable | None:
        return self.tables.get(table_id)

    def apply(self, sql: str, change: DdlChange) -> None:
        """Follow one DDL statement already classified by `parse_ddl`."""
        text = strip_comments(sql)
        ids = [f"{db}.{t}" for db, t in change.tables]
        if change.kind == "CREATE" and ids:
            self.tables.pop(ids[0], None)
            body = text[text.find("(") + 1: text.rfind(")")] if "(" in text else ""
            like = re.search(rf"\bLIKE\s+({_IDENT}(?:\s*\.\s*{_IDENT})?)", text, re.IGNORECASE)
            if like is None and body and not re.search(r"\bSELECT\b", text, re.IGNORECASE):
                self.tables[ids[0]] = _declared_table(split_top(body), text[text.rfind(")"):])
        elif change.kind == "DROP":
            for table_id in ids:
                self.tables.pop(table_id, None)
        elif change.kind == "RENAME":
            for old, new in zip(ids[::2], ids[1::2], strict=True):
                found = self.tables.pop(old, None)
                self.tables.pop(new, None)
                if found is not None:
                    self.tables[new] = found
            if re.match(r"^ALTER\b", text, re.IGNORECASE) and len(ids) == 2:
                self._alter(ids[1], text)
        elif change.kind == "ALTER" and ids:
            self._alter(ids[0], text)
        elif change.kind == "DATABASE" and change.database is not None:
            self._charsets.pop(change.database, None)
        elif change.kind == "UNKNOWN":
            for table_id in ids:
                self.tables.pop(table_id, None)

    def _alter(self, table_id: str, text: str) -> None:
        table = self.tables.get(table_id)
        if table is None:
            return
        head = re.match(rf"^ALTER\s+(?:ONLINE\s+)?(?:IGNORE\s+)?TABLE\s+(?:IF\s+EXISTS\s+)?"
                        rf"{_IDENT}(?:\s*\.\s*{_IDENT})?\s*", text, re.IGNORECASE)
        if head is None:
            self.tables.pop(table_id, None)
            return
        for spec in split_top(text[head.end():]):
            if not _alter_spec(table, spec):
                self.tables.pop(table_id, None)  # not understood: the catalog decides
                return


_POSITION = re.compile(rf"\s+(FIRST|AFTER\s+({_IDENT}))\s*$", re.IGNORECASE)
_KEY_LIST = re.compile(r"PRIMARY\s+KEY\s*(?:USING\s+\w+\s*)?\(((?:[^()]|\([^()]*\))*)\)",
                       re.IGNORECASE)


def _key_names(text: str) -> list[str]:
    return [_unquote(re.sub(r"\(\d+\)$", "", part.strip()).split()[0])
            for part in split_top(text)]


def _declared_table(items: list[str], options: str) -> DeclaredTable:
    table = DeclaredTable({}, [])
    for item in items:
        if key := _KEY_LIST.match(re.sub(r"^CONSTRAINT\s+\S+\s+", "", item, flags=_I)):
            table.primary_key = _key_names(key.group(1))
        elif (parsed := parse_column(item)) is not None:
            table.columns[parsed[0]] = parsed[1]
    _inline_key(table)
    charset = re.search(r"\b(?:CHARACTER\s+SET|CHARSET)\s*=?\s*(\w+)", options, _I)
    table.charset = charset.group(1).lower() if charset else None
    return table


def _inline_key(table: DeclaredTable) -> None:
    """A key declared in the column definition; its columns are NOT NULL."""
    for name, col in table.columns.items():
        if col.primary_key:
            table.primary_key = [name]
            table.columns[name] = replace(col, primary_key=False)
    for name in table.primary_key:
        if name in table.columns:
            table.columns[name] = replace(table.columns[name], nullable=False)


def _place(table: DeclaredTable, spec: str, old: str | None = None) -> bool:
    """ADD/MODIFY/CHANGE one column definition, FIRST/AFTER honoured."""
    position = _POSITION.search(spec)
    parsed = parse_column(spec[:position.start()] if position else spec)
    if parsed is None:
        return False
    name, col = parsed
    items = list(table.columns.items())
    index = next((i for i, (n, _) in enumerate(items) if n == (old or name)), None)
    if index is not None:
        items.pop(index)
    if position is not None and position.group(1).upper() == "FIRST":
        index = 0
    elif position is not None:
        after = _unquote(position.group(2))
        index = next((i + 1 for i, (n, _) in enumerate(items) if n == after), len(items))
    elif index is None:
        index = len(items)
    items.insert(index, (name, col))
    table.columns = dict(items)
    _inline_key(table)
    return True


def _alter_spec(table: DeclaredTable, spec: str) -> bool:
    columns = table.columns
    flags = re.IGNORECASE | re.DOTALL
    if key := re.match(r"^ADD\s+(?:CONSTRAINT\s+\S+\s+)?" + _KEY_LIST.pattern, spec, flags):
        table.primary_key = _key_names(key.group(1))
        _inline_key(table)
        return True
    if re.match(r"^DROP\s+PRIMARY\s+KEY$", spec, flags):
        table.primary_key = []
        return True
    if m := re.match(r"^ADD\s+(?:COLUMN\s+)?(?:IF\s+NOT\s+EXISTS\s+)?(.*)$", spec, flags):
        body = m.group(1).strip()
        if body.startswith("("):
            return all(_place(table, item) for item in split_top(body[1:body.rfind(")")]))
        return _place(table, body) or bool(_SKIP_ITEM.match(body))
    if m := re.match(r"^MODIFY\s+(?:COLUMN\s+)?(?:IF\s+EXISTS\s+)?(.*)$", spec, flags):
        return _place(table, m.group(1))
    if m := re.match(rf"^CHANGE\s+(?:COLUMN\s+)?(?:IF\s+EXISTS\s+)?({_IDENT})\s+(.*)$",
                     spec, flags):
        old = _unquote(m.group(1))
        placed = _place(table, m.group(2), old)
        parsed = parse_column(_POSITION.sub("", m.group(2)))
        new = parsed[0] if parsed is not None else old
        table.primary_key = [new if k == old else k for k in table.primary_key]
        return placed
    if re.match(rf"^ALTER\s+(?:(?:COLUMN\s+)?{_IDENT}\s+SET|INDEX\s+{_IDENT})\s+"
                r"(?:VISIBLE|INVISIBLE)$", spec, flags):
        return True  # visibility only (MySQL 8.0.23+), which no structure here holds
    if m := re.match(rf"^ALTER\s+(?:COLUMN\s+)?({_IDENT})\s+(SET\s+DEFAULT\s+(.*)|DROP\s+"
                     rf"DEFAULT)$", spec, flags):
        name = _unquote(m.group(1))
        if name in columns:
            raw, type_text = find_default(m.group(2)), columns[name].type_text
            columns[name] = replace(
                columns[name], default=catalog_default(raw, type_text) if raw else None,
                default_expression=default_expression(raw, type_text))
        return True
    if m := re.match(rf"^RENAME\s+COLUMN\s+({_IDENT})\s+TO\s+({_IDENT})$", spec, flags):
        old, new = _unquote(m.group(1)), _unquote(m.group(2))
        table.columns = {new if n == old else n: c for n, c in columns.items()}
        table.primary_key = [new if k == old else k for k in table.primary_key]
        return True
    if re.match(r"^DROP\s+(?:INDEX|KEY|FOREIGN|CONSTRAINT|CHECK)\b", spec, flags):
        return True
    if m := re.match(rf"^DROP\s+(?:COLUMN\s+)?(?:IF\s+EXISTS\s+)?({_IDENT})$", spec, flags):
        columns.pop(_unquote(m.group(1)), None)
        return True
    return bool(re.match(r"^(?:RENAME|ENGINE|COMMENT|ADD\s+(?:INDEX|KEY|UNIQUE|"
                         r"CONSTRAINT|FOREIGN|FULLTEXT|SPATIAL|CHECK)|ALGORITHM|"
                         r"LOCK|FORCE|ORDER|AUTO_INCREMENT|ROW_FORMAT|CONVERT|DEFAULT|"
                         r"CHARACTER|COLLATE)\b", spec, flags))
