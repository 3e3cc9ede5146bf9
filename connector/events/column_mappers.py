"""Debezium's column mappers: column.truncate/mask/mask.hash and the propagate.source.type keys.

As Debezium's ColumnMappers: each key's value is a comma-separated list of regexes matched,
whole and case-insensitively, against `db.table.column` (`db.table.TYPE` for
datatype.propagate.source.type); a column takes the first rule that matches, rules in the
order truncate, mask, column propagate, datatype propagate, hash, hash v2. Values only: the
key and the schema's default keep the column's own value.
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from connector.events.types import BINARY_TYPES, FieldMapping
from connector.flavours import flavour_named
from connector.schema import Column
from connector.settings.keys import HASH_KEY, HASH_V2_KEY, JAVA_DIGESTS, MASK_KEY, TRUNCATE_KEY
from connector.settings.model import ConnectorConfig

# Debezium masks and hashes only columns of these JDBC types (CHAR, VARCHAR...).
STRING_COLUMNS = frozenset({"char", "varchar", "tinytext", "text", "mediumtext", "longtext",
                            "enum", "set"})
_INTEGERS = ("tinyint", "smallint", "mediumint", "int", "bigint")
# MariaDB's SHOW CREATE TABLE display widths: (signed, unsigned).
_DISPLAY_WIDTHS = {"tinyint": (4, 3), "smallint": (6, 5), "mediumint": (9, 8),
                   "int": (11, 10), "bigint": (20, 20)}
_SIGNABLE = frozenset({*_INTEGERS, "decimal", "float", "double"})


@dataclass(frozen=True, slots=True)
class SourceColumn:
    """A column as Debezium's DDL parser holds it after SHOW CREATE TABLE: type name,
    length and scale (None: unset)."""

    type_name: str
    length: int | None
    scale: int | None


_DIMENSIONS = re.compile(r"^[a-z ]*?\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)")


def _declared(text: str) -> tuple[int | None, int | None]:
    """(M, D) of a declared `type(M[,D])`; None where the text gives none."""
    found = _DIMENSIONS.match(text)
    if found is None:
        return None, None
    return int(found[1]), None if found[2] is None else int(found[2])


def source_column(column: Column, integer_widths: bool) -> SourceColumn:
    """Debezium's type name, length and scale for `column`: from its declared type text
    where known (the streamed DDL, or the catalog: SHOW CREATE TABLE's form), else from the
    binlog's metadata and the flavour's display widths (`integer_widths`)."""
    t, text = column.type_name, column.type_text
    name = t.upper()
    if t == "boolean":
        name = "BOOLEAN" if text and text.startswith("bool") else "TINYINT"
    if column.unsigned and t in _SIGNABLE:
        name += " UNSIGNED ZEROFILL" if text and "zerofill" in text else " UNSIGNED"
    length: int | None = None
    scale: int | None = None
    if t in ("char", "varchar", "binary", "varbinary", "bit"):
        length = column.length
    elif t == "decimal":
        length, scale = column.precision, column.scale
    elif t in ("float", "double") and text is not None:
        length, scale = _declared(text)
    elif t == "float" and column.scale is not None:
        length, scale = column.precision, column.scale
    elif t in ("time", "datetime", "timestamp"):
        length = column.scale or None  # datetime(0) is written `datetime`
    elif t == "enum":
        length = 1
    elif t == "set":
        length = max(0, 2 * len(column.values) - 1)
    elif t in (*_DISPLAY_WIDTHS, "boolean", "year") and text is not None:
        length = _declared(text)[0]
    elif t == "boolean":
        length = 1
    elif t in _DISPLAY_WIDTHS and integer_widths:
        length = _DISPLAY_WIDTHS[t][column.unsigned]
    elif t == "year" and integer_widths:
        length = 4
    return SourceColumn(name, length, scale)


def _java_truncate(text: str, limit: int) -> str:
    """String.substring(0, limit): `limit` counts UTF-16 code units."""
    if len(text) <= limit // 2:
        return text
    units = text.encode("utf-16-le")
    if len(units) <= 2 * limit:
        return text
    return units[:2 * limit].decode("utf-16-le", errors="ignore")


def _truncate(limit: int, binary: bool) -> Callable[[Any], Any]:
    """Debezium cuts Strings, and ByteBuffers: BINARY/BLOB values, not DECIMAL or BIT ones."""
    def cut(value: Any) -> Any:
        if isinstance(value, str):
            return _java_truncate(value, limit)
        if binary and isinstance(value, bytes | bytearray) and len(value) > limit:
            return bytes(value[:limit])
        return value
    return cut


def _modified_utf8(text: str) -> bytes:
    """Java's DataOutput.writeUTF encoding: NUL as C0 80, supplementary characters as
    two 3-byte surrogates (CESU-8)."""
    out = bytearray()
    for unit in struct.unpack(f"<{len(text.encode('utf-16-le')) // 2}H",
                              text.encode("utf-16-le")):
        if 0 < unit < 0x80:
            out.append(unit)
        elif unit < 0x800:
            out += bytes((0xC0 | unit >> 6, 0x80 | unit & 0x3F))
        else:
            out += bytes((0xE0 | unit >> 12, 0x80 | unit >> 6 & 0x3F, 0x80 | unit & 0x3F))
    return bytes(out)


def java_serialized_string(text: str) -> bytes:
    """ObjectOutputStream.writeObject(String): what HashingByteArrayStrategy V1 hashes."""
    body = _modified_utf8(text)
    if len(body) <= 0xFFFF:
        return b"\xac\xed\x00\x05\x74" + struct.pack(">H", len(body)) + body
    return b"\xac\xed\x00\x05\x7c" + struct.pack(">Q", len(body)) + body


def _hash(algorithm: str, salt: str, v2: bool, length: int | None) -> Callable[[Any], Any]:
    name = JAVA_DIGESTS[algorithm]
    salt_bytes = salt.encode("utf-8")

    def digest(value: Any) -> Any:
        if not isinstance(value, str):
            return None  # Debezium hashes Serializable values; strings are all that reach it
        data = value.encode("utf-8") if v2 else java_serialized_string(value)
        text = hashlib.new(name, salt_bytes + data).hexdigest()
        return text if not length or length <= 0 else text[:length]
    return digest


def _then(first: Callable[[Any], Any] | None, then: Callable[[Any], Any]) -> Callable[[Any], Any]:
    if first is None:
        return then
    return lambda value: then(first(value))


def _with_parameters(mapping: FieldMapping, extra: dict[str, str],
                     convert: Callable[[Any], Any] | None, fallback: Any) -> FieldMapping:
    schema = {**mapping.schema, "parameters": {**mapping.schema.get("parameters", {}), **extra}}
    return mapping.with_convert(schema, convert, fallback)


Rule = tuple[list[re.Pattern[str]], bool, Callable[[Column, SourceColumn, FieldMapping],
                                                    FieldMapping]]


def _patterns(value: str) -> list[re.Pattern[str]]:
    return [re.compile(p.strip(), re.IGNORECASE) for p in value.split(",") if p.strip()]


def _truncate_rule(limit: int) -> Callable[[Column, SourceColumn, FieldMapping], FieldMapping]:
    def apply(column: Column, source: SourceColumn, mapping: FieldMapping) -> FieldMapping:
        if source.length is not None and source.length <= limit:
            return mapping
        cut = _truncate(limit, column.type_name in BINARY_TYPES)
        fallback = None if mapping.fallback is None else cut(mapping.fallback)
        return _with_parameters(mapping, {"truncateLength": str(limit)},
                                _then(mapping.convert, cut), fallback)
    return apply


def _mask_rule(chars: int) -> Callable[[Column, SourceColumn, FieldMapping], FieldMapping]:
    mask = "*" * chars

    def apply(column: Column, source: SourceColumn, mapping: FieldMapping) -> FieldMapping:
        if column.type_name not in STRING_COLUMNS:
            return _with_parameters(mapping, {"masked": "true"}, mapping.convert,
                                    mapping.fallback)
        # Debezium's mask replaces NULL too: the fallback is the mask.
        return _with_parameters(mapping, {"masked": "true"}, lambda _: mask, mask)
    return apply


def _hash_rule(algorithm: str, salt: str, v2: bool
               ) -> Callable[[Column, SourceColumn, FieldMapping], FieldMapping]:
    def apply(column: Column, source: SourceColumn, mapping: FieldMapping) -> FieldMapping:
        if column.type_name not in STRING_COLUMNS:
            return _with_parameters(mapping, {"masked": "true"}, mapping.convert,
                                    mapping.fallback)
        digest = _hash(algorithm, salt, v2, source.length)
        fallback = None if mapping.fallback is None else digest(mapping.fallback)
        return _with_parameters(mapping, {"masked": "true"}, _then(mapping.convert, digest),
                                fallback)
    return apply


def _propagate(column: Column, source: SourceColumn, mapping: FieldMapping) -> FieldMapping:
    extra = {"__debezium.source.column.type": source.type_name}
    if source.length is not None:
        extra["__debezium.source.column.length"] = str(source.length)
    if source.scale is not None:
        extra["__debezium.source.column.scale"] = str(source.scale)
    extra["__debezium.source.column.name"] = column.name
    return _with_parameters(mapping, extra, mapping.convert, mapping.fallback)


class ColumnMappers:
    """The mapper rules of one connector configuration."""

    def __init__(self, config: ConnectorConfig) -> None:
        self._integer_widths = flavour_named(config.flavour).shows_integer_widths
        families: list[list[Rule]] = [[], [], [], [], [], []]
        for key, value in config.column_mappers.items():
            if found := TRUNCATE_KEY.fullmatch(key):
                families[0].append((_patterns(value), False, _truncate_rule(int(found[1]))))
            elif found := MASK_KEY.fullmatch(key):
                families[1].append((_patterns(value), False, _mask_rule(int(found[1]))))
            elif found := HASH_V2_KEY.fullmatch(key):
                families[5].append((_patterns(value), False, _hash_rule(
                    found["algorithm"], found["salt"], True)))
            elif found := HASH_KEY.fullmatch(key):
                families[4].append((_patterns(value), False, _hash_rule(
                    found["algorithm"], found["salt"], False)))
        for value in config.propagate_source_type:
            families[2].append((_patterns(value), False, _propagate))
        for value in config.propagate_datatype:
            families[3].append((_patterns(value), True, _propagate))
        self._rules = [rule for family in families for rule in family]

    def __bool__(self) -> bool:
        return bool(self._rules)

    def value_mapping(self, db: str, table: str, column: Column,
                      mapping: FieldMapping) -> FieldMapping:
        """`mapping` as the first matching rule changes it (unchanged when none matches)."""
        if not self._rules:
            return mapping
        source = source_column(column, self._integer_widths)
        by_name = f"{db}.{table}.{column.name}"
        by_type = f"{db}.{table}.{source.type_name}"
        for patterns, on_type, apply in self._rules:
            subject = by_type if on_type else by_name
            if any(p.fullmatch(subject) for p in patterns):
                return apply(column, source, mapping)
        return mapping
