"""Statement-logged DML in a row-based stream: which table it writes, if one can tell.

Even with `binlog_format=ROW` globally, a session may log its writes as statements (on a
primary) and they carry no row images. The connector must not drop them silently.
"""

from __future__ import annotations

import re

from connector.binlog.transactions import Gap

_DML = re.compile(r"^\s*(?:/\*.*?\*/\s*)*(INSERT|REPLACE|UPDATE|DELETE|LOAD\s+DATA|LOAD\s+XML)\b",
                  re.IGNORECASE | re.DOTALL)
_NAME = r"(?:`((?:[^`]|``)+)`|([\w$]+))"
_TARGET = re.compile(
    r"^\s*(?:/\*.*?\*/\s*)*(?:"
    r"(?:INSERT|REPLACE)(?:\s+(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE))*(?:\s+INTO)?"
    r"|UPDATE(?:\s+(?:LOW_PRIORITY|IGNORE))*"
    r"|DELETE(?:\s+(?:LOW_PRIORITY|QUICK|IGNORE))*\s+FROM"
    r"|LOAD\s+(?:DATA|XML)\b.*?\bINTO\s+TABLE"
    rf")\s+{_NAME}(?:\s*\.\s*{_NAME})?\s*(\S?)",
    re.IGNORECASE | re.DOTALL)


def is_dml(query: str) -> bool:
    return _DML.match(query) is not None


def dml_target(query: str, default_db: str | None) -> tuple[str, str] | None:
    """(db, table) a single-table DML statement writes; None when it cannot be told."""
    match = _TARGET.match(query)
    if match is None:
        return None
    first = (match.group(1) or "").replace("``", "`") or match.group(2)
    second = (match.group(3) or "").replace("``", "`") or match.group(4)
    if match.group(5) == ",":  # a multi-table UPDATE/DELETE
        return None
    if second:
        return first, second
    return (default_db, first) if default_db else None


def statement_gap(query: str, default_db: str | None) -> Gap | None:
    """The gap a statement found in the binlog leaves: None when it is no DML."""
    if not is_dml(query):
        return None
    target = dml_target(query, default_db)
    excerpt = " ".join(query[:400].split())[:80]
    return Gap(None if target is None else (target,), default_db,
               f"as a statement ({excerpt!r}), which has no row images", "binlog_format=ROW")
