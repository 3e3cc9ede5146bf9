"""Which tables are captured: Debezium's include/exclude lists, anchored regexes."""

from __future__ import annotations

import re

from connector.settings.model import ConnectorConfig

SYSTEM_DATABASES = frozenset({"mysql", "sys", "performance_schema", "information_schema"})


def _compile(patterns: list[str]) -> list[re.Pattern[str]]:
    return [re.compile(p, re.IGNORECASE) for p in patterns]


class TableFilter:
    def __init__(self, config: ConnectorConfig) -> None:
        self._db_include = _compile(config.database_include_list)
        self._db_exclude = _compile(config.database_exclude_list)
        self._table_include = _compile(config.table_include_list)
        self._table_exclude = _compile(config.table_exclude_list)
        self._cache: dict[tuple[str, str], bool] = {}

    def database_captured(self, db: str) -> bool:
        if db.lower() in SYSTEM_DATABASES:
            return False
        if self._db_include:
            return any(p.fullmatch(db) for p in self._db_include)
        return not any(p.fullmatch(db) for p in self._db_exclude)

    def captured(self, db: str, table: str) -> bool:
        key = (db, table)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._decide(db, table)
        return found

    def _decide(self, db: str, table: str) -> bool:
        if not self.database_captured(db):
            return False
        name = f"{db}.{table}"
        if self._table_include:
            return any(p.fullmatch(name) for p in self._table_include)
        return not any(p.fullmatch(name) for p in self._table_exclude)
