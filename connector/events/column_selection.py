"""Which columns a table's records carry: column.include/exclude.list and message.key.columns.

Both as Debezium matches them: comma-separated regexes, whole and case-insensitive, against
`db.table.column`. The key ignores the column lists; a table no message.key.columns rule
matches keeps its primary key.
"""

from __future__ import annotations

import re

from connector.schema import Column, TableSchema
from connector.settings.model import ConnectorConfig


def _compiled(patterns: list[str]) -> list[re.Pattern[str]]:
    return [re.compile(p, re.IGNORECASE) for p in patterns]


class ColumnSelection:
    """The value columns and key columns of each table, for one configuration."""

    def __init__(self, config: ConnectorConfig) -> None:
        self._include = _compiled(config.column_include_list)
        self._exclude = _compiled(config.column_exclude_list)
        # message.key.columns: "table-regex:col,col;..." -> one regex per column, in order;
        # as Debezium, the table part is not trimmed (" db.t:a" matches no table).
        self._key_rules = [
            re.compile(f"{table}.{column.strip()}", re.IGNORECASE)
            for part in (config.message_key_columns or "").split(";") if ":" in part
            for table, columns in [part.split(":", 1)]
            for column in columns.split(",")
        ]

    def value_columns(self, schema: TableSchema) -> list[Column]:
        prefix = f"{schema.db}.{schema.table}."
        if self._include:
            return [c for c in schema.columns
                    if any(p.fullmatch(prefix + c.name) for p in self._include)]
        return [c for c in schema.columns
                if not any(p.fullmatch(prefix + c.name) for p in self._exclude)]

    def key_columns(self, schema: TableSchema) -> tuple[str, ...]:
        """Debezium's CustomKeyMapper: for each rule in order, the table's columns it matches
        (once: Debezium fails on a column two rules match); none matched: the primary key."""
        if not self._key_rules:
            return schema.primary_key
        prefix = f"{schema.db}.{schema.table}."
        found = [c.name for rule in self._key_rules for c in schema.columns
                 if rule.fullmatch(prefix + c.name)]
        return tuple(dict.fromkeys(found)) or schema.primary_key
