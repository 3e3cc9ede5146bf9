"""Turns applied transactions into records: change events, schema changes, transactions.

Debezium's EventDispatcher: it sees every transaction in binlog order, asks the encoder
for bytes and hands them to the sink. It tells the snapshot coordinator which keys each
transaction touched and which tables a DDL changed, and sends the rows of the chunk
windows the coordinator closes (`emit_snapshot_rows`). Rows INSERTed into the signal table
(the `source` channel) are handed on in `signal_rows`, for the engine to act on before it
passes the transaction; they are change events only if the filters capture that table.
"""

from __future__ import annotations

import copy
import json
import logging
import re
import time
from typing import Any

from connector.binlog.ddl import _QNAME, DdlChange, _qualified, parse_ddl, strip_comments
from connector.binlog.declared import DeclaredColumns
from connector.binlog.transactions import InnerDdl, Transaction
from connector.ddl_events import drop_statement_parts, java_set_names, rename_statements
from connector.events.envelope import EventEncoder, TableEncoder
from connector.events.history import history_changes, table_change
from connector.events.source_block import SourceInfo
from connector.events.unwrap import with_transforms
from connector.flavours import flavour_named
from connector.gtid import Position
from connector.kafka.sink import Sink
from connector.kafka.topics import TopicAdmin
from connector.schema import TableSchema
from connector.settings.filters import TableFilter
from connector.settings.model import ConnectorConfig
from connector.snapshot.coordinator import SnapshotCoordinator
from connector.truncates import Lookup, TableShapes
from signals.source import SourceSignalRow, SourceSignals

log = logging.getLogger(__name__)

# A primary-key update's d carries the new key and its c the old one (Debezium's headers),
# written as Connect's default header.converter writes the key struct (header_text.py).
NEW_KEY = "__debezium.newkey"
OLD_KEY = "__debezium.oldkey"


def key_header(name: str, key: bytes | None) -> list[tuple[str, str | bytes | None]] | None:
    return None if key is None else [(name, key)]


_CREATE_LIKE = re.compile(rf"^CREATE\s+(?:TEMPORARY\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?"
                          rf"{_QNAME}\s*\(?\s*LIKE\s+({_QNAME})\s*\)?\s*$", re.IGNORECASE)

class CaptureFailed(RuntimeError):
    """The stream holds a change that cannot be captured; the connector stops before it."""


class Dispatcher:
    def __init__(self, config: ConnectorConfig, encoder: EventEncoder, sink: Sink,
                 table_filter: TableFilter, admin: TopicAdmin,
                 snapshots: SnapshotCoordinator,
                 declared: DeclaredColumns | None = None,
                 lookup: Lookup | None = None,
                 source_signals: SourceSignals | None = None) -> None:
        self._config = config
        self._source_signals = source_signals if source_signals is not None and \
            source_signals.enabled else None
        self.signal_rows: list[SourceSignalRow] = []  # the engine takes them after `apply`
        self._signal_row = 0  # signal rows seen in the current transaction's pieces
        self._shapes = TableShapes(lookup)  # a TRUNCATE's columns (`lookup`: the catalog's)
        self._declared = declared if declared is not None else DeclaredColumns()
        self._encoder = encoder
        self._sink = with_transforms(config.unwrap, sink, encoder)  # Kafka Connect's SMTs
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
        self.events_filtered = 0  # rows events of tables the filters exclude (Debezium's count)
        self.events_skipped = 0  # writes on captured tables skipped under warn/skip
        # Debezium's source.row of a DDL event: the row number of the last captured row it
        # sent, which no DDL resets (measured on MySQL: 2 after a 3-row UPDATE).
        self._last_row = 0
        # Transaction metadata of a transaction that arrives in pieces (BEGIN sent, counts).
        self._tx_meta_open = False
        self._tx_total = 0
        self._tx_per_table: dict[str, int] = {}

    def internal_topics(self) -> list[str]:
        topics = [self._config.topic_prefix]
        if self._heartbeat_s > 0:
            topics.append(self._config.heartbeat_topic)
        if self._tx_metadata:
            topics.append(self._config.transaction_topic)
        return topics

    def _topic(self, topic: str) -> None:
        if topic not in self._topics_ready:
            self._admin.ensure([topic])
            self._topics_ready.add(topic)

    def apply(self, tx: Transaction, before: Position) -> None:
        """Send `tx`'s events; `before` is the stream position just before it."""
        self.last_server_id = tx.server_id
        if tx.gaps and not tx.partial:
            self._gaps(tx)
        if tx.created is not None:
            self._apply_ddl(tx, before, tx.created)
        if tx.ddl is not None:
            self._apply_ddl(tx, before)
        else:
            if tx.changes:
                if self._source_signals is not None:
                    self._signals(tx, self._source_signals)
                self._apply_rows(tx)
            if not tx.partial and self._tx_meta_open:
                self._tx_meta_open = False
                self._send_transaction(tx, "END", self._tx_total, self._tx_per_table)

    def _signals(self, tx: Transaction, source: SourceSignals) -> None:
        """The signal table's INSERTed rows, in binlog order (Debezium reads only creates)."""
        if tx.piece == 0:
            self._signal_row = 0
        gtid = str(tx.gtid)
        for change in tx.changes:
            if change.op == "c" and source.watches(change.table.db, change.table.table):
                for row in change.rows:
                    self.signal_rows.append(SourceSignalRow(gtid, self._signal_row,
                                                            tuple(row.values())))
                    self._signal_row += 1

    def _gaps(self, tx: Transaction) -> None:
        """Writes without row images leave nothing to emit: stop before the transaction at
        the first one on a captured table, or warn/skip on request."""
        for gap in tx.gaps:
            if gap.tables is None:  # whatever its default database: it may name any table
                where = f"tables it does not name (default database {gap.db or 'none'})"
            else:
                named = [f"{db}.{table}" for db, table in gap.tables
                         if self._filter.captured(db, table)]
                if not named:
                    continue
                where = ", ".join(named)
            line = (f"transaction GTID {tx.gtid} writes {where} {gap.what}; set {gap.setting} "
                    "for every session writing captured tables, then re-snapshot them "
                    "(event.processing.failure.handling.mode=warn skips it)")
            mode = self._config.failure_handling_mode
            if mode == "fail":
                raise CaptureFailed(line)
            self.events_skipped += 1
            if mode == "warn":
                log.warning("skipped: %s", line)

    def _apply_rows(self, tx: Transaction) -> None:
        send = self._sink.send
        gtid = str(tx.gtid)
        ts_us = tx.ts_us
        snapshots = self._snapshots
        if tx.piece == 0:
            self._tx_total, self._tx_per_table = 0, {}
        per_table = self._tx_per_table
        total = self._tx_total
        captured = self._filter.captured
        skipped = self._config.skipped_operations  # as Debezium's binlog reader: unread
        changes = [c for c in tx.changes if captured(c.table.db, c.table.table)]
        self.events_filtered += len(tx.changes) - len(changes)
        if not skipped.isdisjoint("cud"):  # "t" (the default) is not a rows event
            changes = [c for c in changes if c.op not in skipped]
        if self._tx_metadata and changes and not self._tx_meta_open:
            self._tx_meta_open = True
            self._send_transaction(tx, "BEGIN", 0, {})
        for change in changes:
            table = change.table
            self._shapes.saw(table)
            enc = self._encoder.table(table)
            self._topic(enc.topic)
            source = SourceInfo(ts_us=ts_us, db=table.db, table=table.table,
                                server_id=tx.server_id, gtid=gtid, file=tx.file,
                                pos=change.pos, row=0, thread=tx.thread, query=None)
            now_ms = int(time.time() * 1000)
            rows = change.rows
            if table.id == snapshots.watched_table:
                for row in rows:
                    for image in row if change.op == "u" else (row,):
                        snapshots.on_row_change(table.id, tx.gtid, image)
            if change.op == "u" and any(enc.key_values(b) != enc.key_values(a) for b, a in rows):
                total = self._key_updates(enc, rows, source, now_ms, total)
            elif rows:
                batch_tx = None
                if self._tx_metadata:
                    batch_tx = (gtid, total, per_table.get(table.id, 0))
                    total += len(rows)
                    per_table[table.id] = batch_tx[2] + len(rows)
                topic = enc.topic
                tombstones = self._tombstones and change.op == "d"
                # One call writes the whole rows event's records (compiled: connector/native).
                for key, value in enc.records(change.op, rows, source, now_ms, batch_tx):
                    send(topic, key, value)
                    if tombstones:
                        send(topic, key, None)
            self.rows_out += len(rows)
            if rows:
                self._last_row = len(rows) - 1
        self._tx_total = total

    def _key_updates(self, enc: TableEncoder, rows: list[Any], source: SourceInfo,
                     now_ms: int, total: int) -> int:
        """An UPDATE event of which a row changes its key: per row, a d (and tombstone) and
        a c for those that do, a u for the others, as Debezium; returns the new total."""
        send = self._sink.send
        topic, table_id, gtid = enc.topic, enc.schema.id, source.gtid or ""
        per_table = self._tx_per_table

        def counted() -> dict[str, Any] | None:
            nonlocal total
            if not self._tx_metadata:
                return None
            total += 1
            per_table[table_id] = per_table.get(table_id, 0) + 1
            return {"id": gtid, "total_order": total,
                    "data_collection_order": per_table[table_id]}
        for index, (before, after) in enumerate(rows):
            source.row = index
            tx_meta = counted()
            if enc.key_values(before) == enc.key_values(after):
                send(topic, enc.key(after),
                     enc.value("u", before, after, source, now_ms, tx_meta))
                continue
            old_key, new_key = enc.key(before), enc.key(after)
            new_key_header = key_header(NEW_KEY, enc.key_header(after))  # on d and tombstone
            send(topic, old_key, enc.value("d", before, None, source, now_ms, tx_meta),
                 new_key_header)
            if self._tombstones:
                send(topic, old_key, None, new_key_header)
            tx_meta = counted()  # the c is an event of its own, as in Debezium
            send(topic, new_key, enc.value("c", None, after, source, now_ms, tx_meta),
                 key_header(OLD_KEY, enc.key_header(before)))
        return total

    def emit_snapshot_rows(self, schema: TableSchema, rows: list[Any], file: str,
                           pos: int) -> None:
        """A closed chunk window's rows as op=r records; `file`/`pos`: the stream's position.

        Rows are dicts, or `ReadRow`s the chunk reader encoded with this table's encoding.
        """
        enc = self._encoder.table(schema)
        topic = enc.topic
        self._topic(topic)
        self._shapes.saw(schema)
        now_ms = int(time.time() * 1000)
        source = SourceInfo(ts_us=now_ms * 1000, db=schema.db, table=schema.table, server_id=0,
                            gtid=None, file=file, pos=pos, row=0, thread=None, query=None,
                            snapshot="incremental")
        send = self._sink.send
        head, tail = enc.read_framing(source, now_ms) if enc.row_encoding else (b"", b"")
        for row in rows:
            if type(row) is tuple:
                key, after = row
                send(topic, key, b"".join((head, after, tail)))
            else:
                send(topic, enc.key(row), enc.value("r", None, row, source, now_ms))

    def _send_transaction(self, tx: Transaction, status: str, count: int,
                          per_table: dict[str, int]) -> None:
        topic, key, value = self._encoder.transaction(status, str(tx.gtid), tx.ts_us // 1000,
                                                      count, per_table)
        self._sink.send(topic, key, value)

    def _apply_ddl(self, tx: Transaction, before: Position,
                   inner: InnerDdl | None = None) -> None:
        """The transaction's one statement, or `inner`: a DDL inside BEGIN..COMMIT."""
        ddl = (tx.ddl or "") if inner is None else inner.ddl
        change = parse_ddl(ddl, tx.db)
        self._declared.apply(ddl, change)
        self._shapes.after_ddl(ddl, change)
        self._follow_create_like(ddl, change, tx.db)
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
        for captured_db, captured_table in captured:
            self._snapshots.on_ddl(f"{captured_db}.{captured_table}", change.kind)
            self._encoder.forget(f"{captured_db}.{captured_table}")
        if change.kind == "TRUNCATE":  # no schema change: Debezium emits none for TRUNCATE
            if "t" not in self._config.skipped_operations:
                for captured_db, captured_table in captured:
                    self._send_truncate(tx, captured_db, captured_table, inner)
            return
        flavour = flavour_named(self._config.flavour)
        for text, table, changes, previous in self._schema_changes(ddl, change, captured):
            # Debezium names the tables of the DDL in source.table; the statement's start
            # in pos; the thread of the transaction it is in (its BEGIN's), none outside one.
            # Debezium times a schema change to the millisecond.
            source = SourceInfo(ts_us=tx.ts_us // 1000 * 1000, db=db, table=table,
                                server_id=tx.server_id, gtid=str(tx.gtid), file=tx.file,
                                pos=tx.begin_pos if inner is None else inner.pos,
                                row=self._last_row, thread=None if inner is None else tx.thread,
                                query=None)
            topic, key, value = self._encoder.schema_change(source, text, db, changes)
            self._sink.send(topic, key, value)
            # Debezium's history record: the file position after this DDL; inside a
            # transaction, its start and the events handled since (one: the statement comes
            # right after the BEGIN) and, with transaction metadata, its id.
            position: dict[str, Any] = {
                "ts_sec": tx.ts_us // 1_000_000, "file": tx.file, "pos": tx.end_pos,
                "server_id": tx.server_id, "gtids": flavour.history_gtids(before, tx.gtid)}
            if inner is not None:
                position.update(pos=inner.begun, event=1)
                if self._tx_metadata:
                    position["transaction_id"] = str(tx.gtid)
            history = {"source": {"server": self._config.topic_prefix}, "position": position,
                       "ts_ms": tx.ts_us // 1000, "databaseName": db, "ddl": text,
                       "tableChanges": history_changes(changes, previous)}
            self._sink.send(self._config.history_topic, None,
                            json.dumps(history, separators=(",", ":")).encode())

    def _send_truncate(self, tx: Transaction, db: str, table: str,
                       inner: InnerDdl | None) -> None:
        """Debezium's truncate record: no key, before and after null, op t; no tombstone."""
        schema = self._shapes.schema(db, table)
        if schema is None:
            log.warning("TRUNCATE of %s.%s (GTID %s) not sent: its columns are not known here "
                        "(no row of it streamed since its last DDL, and the catalog has no "
                        "such table)", db, table, tx.gtid)
            return
        enc = self._encoder.table(schema)
        self._topic(enc.topic)
        source = SourceInfo(ts_us=tx.ts_us // 1000 * 1000, db=db, table=table,
                            server_id=tx.server_id, gtid=str(tx.gtid), file=tx.file,
                            pos=tx.begin_pos if inner is None else inner.pos,
                            row=self._last_row, thread=None if inner is None else tx.thread,
                            query=None)
        self._sink.send(enc.topic, None,
                        enc.value("t", None, None, source, int(time.time() * 1000)))

    def _follow_create_like(self, ddl: str, change: DdlChange, db: str | None) -> None:
        """CREATE TABLE t LIKE s: t as s was declared (Debezium's parser copies s), so that
        its schema change has the structure and its events the defaults. DeclaredColumns
        leaves such a table to the catalog, which may already be at a later version."""
        like = _CREATE_LIKE.search(strip_comments(ddl))
        if change.kind != "CREATE" or like is None or not change.tables:
            return
        source = self._declared.table(".".join(_qualified(like.group(1), db)))
        if source is not None:
            new_db, new_table = change.tables[0]
            self._declared.tables[f"{new_db}.{new_table}"] = copy.deepcopy(source)

    def _schema_changes(self, ddl: str, change: DdlChange, captured: list[tuple[str, str]]
                        ) -> list[tuple[str, str | None, list[dict[str, Any]], list[str | None]]]:
        """(ddl, source.table, tableChanges, previous ids) per event, as Debezium splits and
        types them: one DROP event per table with its own statement, one event per pair of a
        RENAME TABLE, a RENAME as an ALTER of the new name, CREATE and ALTER with the table's
        structure. source.table names every table of the statement, in Java's HashSet order."""
        declared = self._declared

        def described(kind: str, db: str, table: str) -> dict[str, Any]:
            return table_change(kind, db, table, declared.table(f"{db}.{table}"),
                                declared.database_charset(db))
        if change.kind == "DROP":
            names = java_set_names(captured)
            prefix, suffix = drop_statement_parts(ddl)
            return [(f"{prefix}`{d}`.`{t}`{suffix}", names, [described("DROP", d, t)],
                     [None]) for d, t in captured]
        if change.kind == "RENAME":
            pairs = [(old, new) for old, new in zip(change.tables[::2], change.tables[1::2],
                                                     strict=True) if new in captured]
            if not pairs:
                return []
            names = java_set_names([new for _, new in pairs])
            texts = rename_statements(ddl)
            if texts is None or len(texts) != len(change.tables) // 2:  # ALTER .. RENAME
                return [(ddl, names, [described("ALTER", *new) for _, new in pairs],
                         [None] * len(pairs))]
            # previousId: RENAME TABLE only (Debezium has none for ALTER .. RENAME)
            by_new = dict(zip(change.tables[1::2], texts, strict=True))
            return [(by_new[new], names, [described("ALTER", *new)], [f'"{old[0]}"."{old[1]}"'])
                    for old, new in pairs]
        if change.kind in ("CREATE", "ALTER"):
            return [(ddl, captured[0][1] if len(captured) == 1 else None,
                     [described(change.kind, d, t) for d, t in captured],
                     [None] * len(captured))]
        return [(ddl, None, [], [])]

    def maybe_heartbeat(self, now: float, position: Position) -> None:
        if self._heartbeat_s <= 0 or now < self._next_heartbeat:
            return
        self._next_heartbeat = now + self._heartbeat_s
        topic, key, value = self._encoder.heartbeat(int(time.time() * 1000))
        self._sink.send(topic, key, value)
