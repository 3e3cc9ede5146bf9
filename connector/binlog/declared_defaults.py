"""DEFAULT clauses of streamed DDL, read for declared.py (apart, to keep that one short)."""

from __future__ import annotations

import re

_DEFAULT = re.compile(
    r"\bDEFAULT\s+('(?:[^'\\]|''|\\.)*'|[bBxX]'[^']*'|0[xX][0-9a-fA-F]+\b|0[bB][01]+\b|"
    r"[-+]?[\d.]+(?:[eE][-+]?\d+)?|\w+(?:\s*\([^)]*\))?|\((?:[^()]|\([^()]*\))*\))",
    re.IGNORECASE)
_NOW = re.compile(r"^(?:current_timestamp|now|localtime|localtimestamp)\b", re.IGNORECASE)
# 0x0102 / X'0102' and 0b101 / b'101': the digits in group 1 or 2 (hex), 3 or 4 (bits).
_HEX_BITS = re.compile(r"^(?:0x([0-9a-f]+)|x'([0-9a-f]*)'|0b([01]+)|b'([01]*)')$",
                       re.IGNORECASE)
# Types for which a hex literal is a number (elsewhere it is a string of bytes).
_NUMERIC = re.compile(r"^(?:(?:tiny|small|medium|big|middle)?int\d?|integer|serial|bit|"
                      r"dec(?:imal)?|numeric|fixed|float\d?|double|real|year|bool(?:ean)?)\b")


def find_default(attributes: str) -> str | None:
    """The DEFAULT clause's value as written in a column's attributes; None: no DEFAULT."""
    match = _DEFAULT.search(attributes)
    return match.group(1) if match else None


def catalog_default(raw: str, type_text: str) -> str | None:
    """A DEFAULT clause value as information_schema writes it (NULL: none). A hex literal
    is its bytes, quoted (None when they are no UTF-8 text, as the catalog reads them),
    or its number on a numeric column."""
    upper = raw.upper()
    if upper == "NULL":
        return None
    if upper in ("TRUE", "FALSE"):
        return "1" if upper == "TRUE" else "0"
    if _NOW.match(raw):
        return "current_timestamp()"
    literal = _HEX_BITS.match(raw)
    if literal is not None and literal.group(3) is not None:
        return f"b'{literal.group(3)}'"
    if literal is not None and literal.group(4) is None:
        digits = literal.group(1) or literal.group(2) or ""
        if _NUMERIC.match(type_text):
            return str(int(digits or "0", 16))
        try:
            text = bytes.fromhex(digits.zfill(len(digits) + len(digits) % 2)).decode()
        except ValueError:
            return None
        return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"
    return raw


def default_expression(raw: str | None, type_text: str) -> str | None:
    """The DEFAULT as Debezium's parser reports it: literals unquoted, b'101' and x'0A'
    as their digits, and CURRENT_TIMESTAMP on a TIMESTAMP as the epoch."""
    if raw is None or raw.upper() == "NULL":
        return None
    if raw.startswith("'") and raw.endswith("'"):
        return raw[1:-1].replace("''", "'")
    if (literal := _HEX_BITS.match(raw)) is not None:
        return next(d for d in literal.groups() if d is not None)
    if _NOW.match(raw):
        return "1970-01-01 00:00:00" if type_text.startswith("timestamp") else None
    return raw
