"""Turns applied transactions into records: change events, schema changes, transactions.

Debezium's EventDispatcher: it sees every transaction in binlog order, asks the encoder
for bytes and hands them to the sink. It tells the snapshot coordinator which keys each
transaction touched and which tables a DDL changed, and nothing else.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from connector.binlog.ddl import parse_ddl
from connector.binlog.reader import Transaction
from connector.config import ConnectorConfig
from connector.events.envelope import EventEncoder, SourceInfo
from connector.filters import TableFilter
from connector.gtid import MariaDbGtidPos
from connector.kafka import TopicAdmin
from connector.sink import Sink
from connector.snapshot.coordinator import SnapshotCoordinator

log = logging.getLogger(__name__)


class Dispatcher:
    def __init__(self, config: ConnectorConfig, encoder: EventEncoder, sink: Sink,
                 table_filter: TableFilter, admin: TopicAdmin,
                 snapshots: SnapshotCoordinator) -> None:
        self._config = config
        self._encoder = encoder
        self._sink = sink
        self._filter = table_filter
        self._admin = admin
        self._snapshots = snapshots
        self._tombstones = config.tombstones_on_delete
        self._tx_metadata = config.provide_transaction_metadata
        self._heartbeat_s = config.heartbeat_interval_ms / 1000.0
        self._next_heartbeat = 0.0
        self._topics_ready: set[str] = set()
        self._unknown_ddl_logged: set[str] = set()
        self.last_server_id = 0
        self.rows_out = 0

    def internal_topics(self) -> list[str]:
        topics = [self._config.topic_prefix, self._config.history_topic]
        if self._heartbeat_s > 0:
            topics.append(self._config.heartbeat_topic)
        if self._tx_metadata:
            topics.append(self._config.transaction_topic)
        return topics

    def _topic(self, topic: str) -> None:
        if topic not in self._topics_ready:
            self._admin.ensure([topic])
            self._topics_ready.add(topic)

    def apply(self, tx: Transaction) -> None:
        self.last_server_id = tx.server_id
        if tx.ddl is not None:
            self._apply_ddl(tx)
        elif tx.changes:
            self._apply_rows(tx)

    def _apply_rows(self, tx: Transaction) -> None:
        send = self._sink.send
        gtid = str(tx.gtid)
        ts_ms = tx.ts_sec * 1000
        snapshots = self._snapshots
        tx_meta: dict[str, Any] | None = None
        per_table: dict[str, int] = {}
        total = 0
        captured = self._filter.captured
        changes = [c for c in tx.changes if captured(c.table.db, c.table.table)]
        if self._tx_metadata and changes:
            self._send_transaction(tx, "BEGIN", 0, {})
        for change in changes:
            table = change.table
            enc = self._encoder.table(table)
            self._topic(enc.topic)
            source = SourceInfo(ts_ms=ts_ms, db=table.db, table=table.table,
                                server_id=tx.server_id, gtid=gtid, file=tx.file,
                                pos=tx.begin_pos, row=0, thread=tx.thread, query=None)
            now_ms = int(time.time() * 1000)
            topic = enc.topic
            table_id = table.id
            watched = table_id == snapshots.watched_table
            for index, row in enumerate(change.rows):
                source.row = index
                if self._tx_metadata:
                    total += 1
                    per_table[table_id] = per_table.get(table_id, 0) + 1
                    tx_meta = {"id": gtid, "total_order": total,
                               "data_collection_order": per_table[table_id]}
                if change.op == "u":
                    before, after = row
                    if watched:
                        snapshots.on_row_change(table_id, tx.gtid, before)
                        snapshots.on_row_change(table_id, tx.gtid, after)
                    if enc.key_values(before) != enc.key_values(after):
                        key = enc.key(before)
                        send(topic, key, enc.value("d", before, None, source, now_ms, tx_meta))
                        if self._tombstones:
                            send(topic, key, None)
                        send(topic, enc.key(after),
                             enc.value("c", None, after, source, now_ms, tx_meta))
                    else:
                        send(topic, enc.key(after),
                             enc.value("u", before, after, source, now_ms, tx_meta))
                elif change.op == "c":
                    if watched:
                        snapshots.on_row_change(table_id, tx.gtid, row)
                    send(topic, enc.key(row), enc.value("c", None, row, source, now_ms, tx_meta))
                else:
                    if watched:
                        snapshots.on_row_change(table_id, tx.gtid, row)
                    key = enc.key(row)
                    send(topic, key, enc.value("d", row, None, source, now_ms, tx_meta))
                    if self._tombstones:
                        send(topic, key, None)
            self.rows_out += len(change.rows)
        if self._tx_metadata and changes:
            self._send_transaction(tx, "END", total, per_table)

    def _send_transaction(self, tx: Transaction, status: str, count: int,
                          per_table: dict[str, int]) -> None:
        topic, key, value = self._encoder.transaction(status, str(tx.gtid), tx.ts_sec * 1000,
                                                      count, per_table)
        self._sink.send(topic, key, value)

    def _apply_ddl(self, tx: Transaction) -> None:
        ddl = tx.ddl or ""
        change = parse_ddl(ddl, tx.db)
        if change.kind == "UNKNOWN":
            head = " ".join(ddl.split())[:80]
            if head not in self._unknown_ddl_logged:
                self._unknown_ddl_logged.add(head)
                log.warning("DDL not recognised, recorded as is (column names still come from "
                            "the binlog): %s", head)
        captured = [t for t in change.tables if self._filter.captured(*t)]
        db = change.database or tx.db or ""
        if not captured and not (change.kind in ("DATABASE", "UNKNOWN")
                                 and self._filter.database_captured(db)):
            return
        for table in captured:
            self._snapshots.on_ddl(f"{table[0]}.{table[1]}", change.kind)
        source = SourceInfo(ts_ms=tx.ts_sec * 1000, db=db, table=None, server_id=tx.server_id,
                            gtid=str(tx.gtid), file=tx.file, pos=tx.begin_pos, row=0,
                            thread=tx.thread, query=None)
        table_changes = [{"type": change.kind, "id": f'"{d}"."{t}"'} for d, t in captured]
        topic, key, value = self._encoder.schema_change(source, ddl, db, table_changes)
        self._sink.send(topic, key, value)
        history = {"source": {"server": self._config.topic_prefix},
                   "position": {"gtids": str(tx.gtid), "file": tx.file, "pos": tx.end_pos},
                   "ts_ms": tx.ts_sec * 1000, "databaseName": db, "ddl": ddl,
                   "tableChanges": table_changes}
        self._sink.send(self._config.history_topic, None,
                        json.dumps(history, separators=(",", ":")).encode())

    def maybe_heartbeat(self, now: float, position: MariaDbGtidPos) -> None:
        if self._heartbeat_s <= 0 or now < self._next_heartbeat:
            return
        self._next_heartbeat = now + self._heartbeat_s
        topic, key, value = self._encoder.heartbeat(int(time.time() * 1000))
        self._sink.send(topic, key, value)
