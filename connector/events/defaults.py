"""A column DEFAULT (information_schema's text form) as the value a SELECT would return.

The type converters then turn it into the event value, as for any row value.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from connector.schema import Column

_INTEGERS = frozenset({"tinyint", "smallint", "mediumint", "int", "bigint", "year", "boolean"})
_BINARY = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})


def literal_value(column: Column) -> Any:
    """The DEFAULT as a SELECT would return it; None for NULL, none or an expression."""
    if column.default is None:
        return None
    text = sql_literal(column.default)
    if text is None:
        return None
    try:
        return _typed(column, text)
    except (ValueError, ArithmeticError):
        return None


def sql_literal(text: str) -> str | None:
    """The literal's text: 'x' unquoted, numbers and b'..' as they are; None otherwise."""
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'").replace("\\'", "'").replace("\\\\", "\\")
    if text.startswith(("b'", "B'")) and text.endswith("'"):
        return text
    try:
        Decimal(text)
    except ArithmeticError:
        return None
    return text


def _typed(column: Column, text: str) -> Any:
    t = column.type_name
    if text.startswith(("b'", "B'")):
        return int(text[2:-1] or "0", 2)
    if t in _INTEGERS:
        return int(Decimal(text))
    if t == "decimal":
        return Decimal(text)
    if t in ("float", "double"):
        return float(text)
    if t == "bit":
        return int(text)
    if t in _BINARY:
        return text.encode("utf-8")
    if t == "date":
        return dt.date.fromisoformat(text)
    if t in ("datetime", "timestamp"):
        value = dt.datetime.fromisoformat(text)
        return value.replace(tzinfo=dt.UTC) if t == "timestamp" else value
    if t == "time":
        sign = -1 if text.startswith("-") else 1
        hours, minutes, seconds = text.lstrip("-").split(":")
        return sign * dt.timedelta(hours=int(hours), minutes=int(minutes),
                                   seconds=float(seconds))
    return text
