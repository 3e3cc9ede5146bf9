"""The replica's general log, to see every statement the connector's `cdc` user sent."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

from tests.services import CDC_USER, MariaDb

# What a read-only connector may send: SELECT, SHOW, session SETs (user variables, session
# settings, SET STATEMENT ... FOR SELECT). Nothing global, no DO, no writes.
_READ_ONLY = re.compile(
    r"^(SELECT\b|SHOW\b|SET\s+STATEMENT\s+max_statement_time=[\d.]+\s+FOR\s+SELECT\b|"
    r"SET\s+(?!GLOBAL\b|PERSIST|PASSWORD\b|ROLE\b|DEFAULT\s+ROLE\b|@@global\.|STATEMENT\b))",
    re.IGNORECASE)


@contextlib.contextmanager
def general_log(replica: MariaDb, path: Path) -> Iterator[Path]:
    """Log every statement the replica receives to `path` while the block runs."""
    replica.execute("SET GLOBAL general_log_file = %s", (str(path),))
    replica.execute("SET GLOBAL log_output = 'FILE'")
    replica.execute("SET GLOBAL general_log = 1")
    try:
        yield path
    finally:
        replica.execute("SET GLOBAL general_log = 0")


def cdc_statements(path: Path) -> list[str]:
    """Statements of the connections the `cdc` user opened (multi-line ones joined)."""
    text = path.read_text(errors="replace")
    threads = set(re.findall(rf"\s(\d+) Connect\s+{CDC_USER}@", text))
    entry = re.compile(r"^(?:\d{6}\s+\d{1,2}:\d\d:\d\d)?\s+(\d+)\s(\w+(?: \w+)*)\t(.*)$")
    statements: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines():
        m = entry.match(line)
        if m:
            current = None
            if m.group(1) in threads and m.group(2) == "Query":
                current = [m.group(3)]
                statements.append("")
        elif current is not None:
            current.append(line)
        if current is not None:
            statements[-1] = "\n".join(current)
    return statements


def not_read_only(statements: list[str]) -> list[str]:
    return [s for s in statements if not _READ_ONLY.match(s.strip())]
