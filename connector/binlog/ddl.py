"""Recognise which tables a DDL statement changes.

Column names and types come from the binlog's table-map metadata, so the parser only has
to say which tables a statement touches (to route schema-change events, re-select a
buffered snapshot chunk, forget dropped tables). A statement it does not recognise is
logged once and harms nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_IDENT = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_QNAME = rf"{_IDENT}(?:\s*\.\s*{_IDENT})?"
_NAME = rf"({_QNAME})"
# Quoted text (kept as written: 'a  b', '#c'), or comments and blanks (one blank each).
_COMMENTS = re.compile(r"""('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|`(?:[^`]|``)*`)|"""
                       r"(?:/\*(?!!).*?\*/|/\*!\d*|\*/|--[^\n]*|#[^\n]*|\s)+", re.DOTALL)

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("CREATE", re.compile(rf"^CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMPORARY\s+)?TABLE\s+"
                          rf"(?:IF\s+NOT\s+EXISTS\s+)?{_NAME}", re.IGNORECASE)),
    ("ALTER", re.compile(rf"^ALTER\s+(?:ONLINE\s+)?(?:IGNORE\s+)?TABLE\s+(?:IF\s+EXISTS\s+)?"
                         rf"{_NAME}", re.IGNORECASE)),
    ("DROP", re.compile(rf"^DROP\s+(?:TEMPORARY\s+)?TABLES?\s+(?:IF\s+EXISTS\s+)?"
                        rf"((?:{_QNAME}\s*,?\s*)+)", re.IGNORECASE)),
    ("TRUNCATE", re.compile(rf"^TRUNCATE\s+(?:TABLE\s+)?{_NAME}", re.IGNORECASE)),
    ("RENAME", re.compile(r"^RENAME\s+TABLES?\s+(.+)$", re.IGNORECASE | re.DOTALL)),
    ("DATABASE", re.compile(rf"^(?:CREATE|DROP|ALTER)\s+(?:DATABASE|SCHEMA)\s+"
                            rf"(?:IF\s+(?:NOT\s+)?EXISTS\s+)?({_IDENT})", re.IGNORECASE)),
]
_IGNORED = re.compile(r"^(?:CREATE|DROP|ALTER)\s+(?:(?:OR\s+REPLACE\s+)?(?:DEFINER\s*=\s*\S+\s+)?"
                      r"(?:ALGORITHM\s*=\s*\w+\s+)?(?:SQL\s+SECURITY\s+\w+\s+)?)?"
                      r"(?:VIEW|TRIGGER|PROCEDURE|FUNCTION|EVENT|USER|ROLE|SERVER|INDEX|"
                      r"UNIQUE\s+INDEX|SEQUENCE)\b|^(?:GRANT|REVOKE|FLUSH|ANALYZE|OPTIMIZE|"
                      r"SET|SAVEPOINT|XA|REPAIR|CHECK)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class DdlChange:
    """kind: CREATE ALTER DROP TRUNCATE RENAME DATABASE OTHER UNKNOWN; tables as (db, table)."""

    kind: str
    tables: tuple[tuple[str, str], ...]
    database: str | None = None


def _unquote(ident: str) -> str:
    ident = ident.strip()
    if ident.startswith("`") and ident.endswith("`"):
        return ident[1:-1].replace("``", "`")
    return ident


def _qualified(name: str, default_db: str | None) -> tuple[str, str]:
    parts = re.findall(_IDENT, name)
    if len(parts) >= 2:
        return _unquote(parts[0]), _unquote(parts[1])
    return default_db or "", _unquote(parts[0])


def strip_comments(sql: str) -> str:
    """`sql` without comments, blanks collapsed outside quotes."""
    return _COMMENTS.sub(lambda m: m.group(1) or " ", sql).strip()


def parse_ddl(sql: str, default_db: str | None) -> DdlChange:
    """Which tables `sql` changes; kind UNKNOWN when the statement is not recognised."""
    text = strip_comments(sql)
    for kind, pattern in _PATTERNS:
        match = pattern.match(text)
        if match is None:
            continue
        if kind == "DATABASE":
            return DdlChange(kind, (), _unquote(match.group(1)))
        if kind == "DROP":
            names = re.findall(_QNAME, match.group(1))
            names = [n for n in names if n.upper() not in ("RESTRICT", "CASCADE", "WAIT",
                                                             "NOWAIT")]
            return DdlChange(kind, tuple(_qualified(n, default_db) for n in names))
        if kind == "RENAME":
            pairs = re.findall(rf"{_NAME}\s+TO\s+{_NAME}", match.group(1), re.IGNORECASE)
            tables = tuple(t for old, new in pairs for t in (_qualified(old, default_db),
                                                             _qualified(new, default_db)))
            return DdlChange(kind, tables)
        table = _qualified(match.group(1), default_db)
        if kind == "ALTER" and re.search(r"\bRENAME\s+(?:TO|AS)\s+", text, re.IGNORECASE):
            new = re.search(rf"\bRENAME\s+(?:TO|AS)\s+{_NAME}", text, re.IGNORECASE)
            if new is not None:
                return DdlChange("RENAME", (table, _qualified(new.group(1), default_db)))
        return DdlChange(kind, (table,))
    if _IGNORED.match(text):
        return DdlChange("OTHER", ())
    return DdlChange("UNKNOWN", ())
