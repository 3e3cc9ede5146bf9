"""How Debezium splits and names the schema-change events of one DDL statement.

DROP TABLE and RENAME TABLE of several tables are one event per table (or pair), with the
statement rewritten for each; `source.table` lists the tables in Java's HashSet order.
"""

from __future__ import annotations

import re

from connector.binlog.declared import split_top

_DROP_HEAD = re.compile(r"\s*(?:/\*.*?\*/\s*)*(DROP\s+(?:TEMPORARY\s+)?TABLES?\s+"
                        r"(?:IF\s+EXISTS\s+)?)", re.IGNORECASE | re.DOTALL)
_DROP_TAIL = re.compile(r"\b(RESTRICT|CASCADE)\s*(?:/\*.*?\*/\s*)*$", re.IGNORECASE | re.DOTALL)
_RENAME_HEAD = re.compile(r"\s*(?:/\*.*?\*/\s*)*(RENAME\s+TABLES?\s+)(.*?)\s*$",
                          re.IGNORECASE | re.DOTALL)


def drop_statement_parts(ddl: str) -> tuple[str, str]:
    """What Debezium writes around each table of a DROP TABLE: the statement's own words up
    to its first table ("DROP TABLE IF EXISTS " where the server logged IF EXISTS, as
    MariaDB does) and a trailing RESTRICT/CASCADE."""
    head = _DROP_HEAD.match(ddl)
    tail = _DROP_TAIL.search(ddl)
    return (head.group(1) if head else "DROP TABLE "), (f" {tail.group(1)}" if tail else "")


def rename_statements(ddl: str) -> list[str] | None:
    """A RENAME TABLE as Debezium splits it, one statement per pair ("RENAME TABLE a TO b");
    None for a statement that is no RENAME TABLE."""
    match = _RENAME_HEAD.match(ddl)
    if match is None:
        return None
    return [match.group(1) + pair for pair in split_top(match.group(2))]


def _java_string_hash(text: str) -> int:
    """String.hashCode (over UTF-16 units), as an unsigned 32-bit number."""
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def java_set_names(tables: list[tuple[str, str]]) -> str:
    """Table names joined in the order Debezium's source.table lists them: a java.util.HashSet
    of TableIds (hash of "db.table") built in statement order, then copied."""
    hashes = [(h ^ (h >> 16)) for h in (_java_string_hash(f"{d}.{t}") for d, t in tables)]
    capacity = 16
    while len(tables) > capacity * 3 // 4:  # the set as it grew
        capacity *= 2
    order = sorted(range(len(tables)), key=lambda i: hashes[i] & (capacity - 1))
    copy = 16  # new HashSet<>(set): capacity for size / 0.75 + 1
    while copy < int(len(tables) / 0.75) + 1:
        copy *= 2
    order = sorted(order, key=lambda i: hashes[i] & (copy - 1))
    return ",".join(tables[i][1] for i in order)
