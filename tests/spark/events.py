"""Change records for the Spark tests, produced by the connector's own encoder.

Rows are given as the source decodes them (Decimal, date, datetime, bytes...); the
connector's `EventEncoder` turns them into the exact key/value bytes `gtidmark run` writes.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from connector.events import EventEncoder, SourceInfo
from connector.events.envelope import TableEncoder
from connector.schema import TableSchema
from connector.settings.model import ConnectorConfig
from connector.settings.parse import parse_config

Item = tuple[bytes | None, bytes | None]


def connector_config(prefix: str, schemas: bool = True, **extra: str) -> ConnectorConfig:
    """A connector configuration with JsonConverter (`schemas.enable` as given)."""
    flag = "true" if schemas else "false"
    conf = {"database.hostname": "h", "database.user": "u", "database.server.id": "5",
            "topic.prefix": prefix, "bootstrap.servers": "b",
            "key.converter.schemas.enable": flag, "value.converter.schemas.enable": flag,
            **extra}
    return parse_config({"name": "spark-tests", "config": conf})


class Changes:
    """Encodes c/u/r/d/t changes of one table exactly as the connector does."""

    def __init__(self, schema: TableSchema, prefix: str, schemas: bool = True,
                 config: dict[str, str] | None = None) -> None:
        self.encoder: TableEncoder = EventEncoder(
            connector_config(prefix, schemas, **(config or {}))).table(schema)
        self.topic = self.encoder.topic
        self._source = SourceInfo(ts_us=1_700_000_000_000_000, db=schema.db,
                                  table=schema.table,
                                  server_id=1, gtid=None, file="binlog.000001", pos=4,
                                  row=0, thread=None, query=None)

    def upsert(self, op: str, row: dict[str, Any]) -> Item:
        """A `c`, `u` or `r` record carrying `row` as its after image."""
        return self.encoder.key(row), self.encoder.value(op, None, row, self._source, 0)

    def update(self, before: dict[str, Any], after: dict[str, Any]) -> Item:
        """A `u` record with both images, keyed by `after` (key unchanged, or no key)."""
        return self.encoder.key(after), self.encoder.value("u", before, after, self._source, 0)

    def truncate(self) -> Item:
        """A `t` record (skipped.operations without t): no key, before and after null."""
        return None, self.encoder.value("t", None, None, self._source, 0)

    def delete(self, row: dict[str, Any]) -> list[Item]:
        """A `d` record and the tombstone after it (tombstones.on.delete=true)."""
        key = self.encoder.key(row)
        return [(key, self.encoder.value("d", row, None, self._source, 0)), (key, None)]


def raw_value(payload: dict[str, Any]) -> bytes:
    """A schemaless value that is not a change envelope the connector writes (bad input)."""
    return json.dumps(payload).encode()


def utc(value: dt.datetime) -> str:
    """How `helpers.table_rows` shows a timestamp read back from Iceberg."""
    return value.strftime("%Y-%m-%d %H:%M:%S.%f")
