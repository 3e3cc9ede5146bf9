"""Debezium's `source` block: what it holds (SourceInfo), its schema, and its JSON text.

Written once per binlog event or snapshot chunk and shared by every row of it; the
envelope (events/envelope.py) places it in each change record.
"""

from __future__ import annotations

from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any

from connector.events.converters import dumps

SOURCE_VERSION = "gtidmark-0.1.0"
SNAPSHOT_VALUES = "true,first,first_in_data_collection,last_in_data_collection,last,false," \
    "incremental"


@dataclass(slots=True)
class SourceInfo:
    """Where an event came from (Debezium's `source` block)."""

    ts_us: int  # microseconds: MySQL's GTID events carry commit times that fine
    db: str
    table: str | None
    server_id: int
    gtid: str | None
    file: str
    pos: int
    row: int
    thread: int | None
    query: str | None
    snapshot: str = "false"  # "false" | "incremental" | "true" | "last"


def event_key(s: SourceInfo) -> tuple[Any, ...]:
    """What the block holds but `row`: equal keys, equal blocks around `row`."""
    return (s.ts_us, s.snapshot, s.db, s.table, s.server_id, s.gtid, s.file, s.pos, s.thread,
            s.query)


def schema_field(type_: str, field: str, optional: bool = False, **extra: Any) -> dict[str, Any]:
    return {"type": type_, "optional": optional, **extra, "field": field}


def source_schema(connector: str) -> dict[str, Any]:
    snapshot = schema_field("string", "snapshot", True, name="io.debezium.data.Enum", version=1,
                  parameters={"allowed": SNAPSHOT_VALUES}, default="false")
    return {
        "type": "struct",
        "fields": [
            schema_field("string", "version"), schema_field("string", "connector"), schema_field("string", "name"),
            schema_field("int64", "ts_ms"), snapshot, schema_field("string", "db"),
            schema_field("string", "sequence", True), schema_field("int64", "ts_us", True),
            schema_field("int64", "ts_ns", True), schema_field("string", "table", True), schema_field("int64", "server_id"),
            schema_field("string", "gtid", True), schema_field("string", "file"), schema_field("int64", "pos"),
            schema_field("int32", "row"), schema_field("int64", "thread", True), schema_field("string", "query", True),
        ],
        "optional": False,
        "name": f"io.debezium.connector.{connector}.Source",
        "version": 1,
    }


TRANSACTION_BLOCK = {
    "type": "struct",
    "fields": [schema_field("string", "id"), schema_field("int64", "total_order"),
               schema_field("int64", "data_collection_order")],
    "optional": True, "name": "event.block", "version": 1,
}


class SourceStruct:
    """Builds the `source` payload; the constant fields are bound once."""

    __slots__ = ("_connector", "_json_key", "_json_parts", "_name", "_streaming")

    def __init__(self, connector: str, name: str, streaming: str | None = "false") -> None:
        self._connector = connector
        self._name = name
        # `snapshot` of a streamed event: Debezium leaves it null and the converter writes
        # the field's default "false", unless it keeps nulls (replace.null.with.default).
        self._streaming = streaming
        self._json_key: tuple[Any, ...] | None = None
        self._json_parts = ("", "")

    def json_parts(self, s: SourceInfo) -> tuple[str, str]:
        """The block's JSON text before and after the value of `row`.

        Only `row` changes between the rows of one binlog event or snapshot chunk, so the
        rest is written once per event, not once per row: directly, as `dumps(self(s))`
        would write it (json's encoder took a fifth of the engine on 1-3-row transactions).
        """
        key = event_key(s)
        if key != self._json_key:
            self._json_parts = self._text(s)
            self._json_key = key
        return self._json_parts

    def _text(self, s: SourceInfo) -> tuple[str, str]:
        if not (type(s.ts_us) is type(s.server_id) is type(s.pos) is int
                and type(s.thread) in (int, type(None))):
            doc = self(s)
            doc["row"] = 0
            text = dumps(doc)
            at = text.index(',"row":0,') + len(',"row":')
            return text[:at], text[at + 1:]
        ts = s.ts_us
        return "".join((
            '{"version":', _TEXT_VERSION, ',"connector":', encode_basestring(self._connector),
            ',"name":', encode_basestring(self._name), ',"ts_ms":', str(ts // 1000),
            ',"snapshot":', _text_or_null(self._snapshot(s)), ',"db":', _text_or_null(s.db),
            ',"sequence":null,"ts_us":', str(ts), ',"ts_ns":', str(ts * 1000),
            ',"table":', _text_or_null(s.table), ',"server_id":', str(s.server_id),
            ',"gtid":', _text_or_null(s.gtid), ',"file":', _text_or_null(s.file),
            ',"pos":', str(s.pos), ',"row":')), "".join((
                ',"thread":', "null" if s.thread is None else str(s.thread),
                ',"query":', _text_or_null(s.query), "}"))

    def _snapshot(self, s: SourceInfo) -> str | None:
        return self._streaming if s.snapshot == "false" else s.snapshot

    def __call__(self, s: SourceInfo) -> dict[str, Any]:
        return {
            "version": SOURCE_VERSION, "connector": self._connector, "name": self._name,
            "ts_ms": s.ts_us // 1000, "snapshot": self._snapshot(s), "db": s.db,
            "sequence": None,
            "ts_us": s.ts_us, "ts_ns": s.ts_us * 1000, "table": s.table,
            "server_id": s.server_id, "gtid": s.gtid, "file": s.file, "pos": s.pos,
            "row": s.row, "thread": s.thread, "query": s.query,
        }


_TEXT_VERSION = encode_basestring(SOURCE_VERSION)


def _text_or_null(value: str | None) -> str:
    return "null" if value is None else encode_basestring(value)
