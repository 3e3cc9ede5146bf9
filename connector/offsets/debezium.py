"""Offsets written by Debezium's MySQL/MariaDB connector, read as our own (migration).

Debezium's value (BinlogOffsetContext) has `gtids` (absent when the server gave it no
GTIDs: its MySQL connector on MariaDB), `file`/`pos` (the restart point: the start of the
transaction in progress, or after the last one), `event`/`row` (what to skip after it),
`server_id`, `ts_sec`, `transaction_id`, and while an incremental snapshot runs
`incremental_snapshot_collections` (JSON), `incremental_snapshot_primary_key` and
`_maximum_key` (hex of a Java-serialized Object[]) and `_correlation_id`; during its
initial snapshot `"snapshot": "INITIAL"` with the snapshot's binlog file/pos.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from connector.flavours import position_of_either
from connector.offsets.java_keys import decode_java_key
from connector.offsets.value import ConnectorOffsets
from connector.snapshot.progress import TableProgress
from connector.snapshot.state import SnapshotState

log = logging.getLogger(__name__)

COLLECTIONS = "incremental_snapshot_collections"
COLLECTION_ID = "incremental_snapshot_collections_id"
COLLECTION_CONDITION = "incremental_snapshot_collections_additional_condition"
COLLECTION_SURROGATE_KEY = "incremental_snapshot_collections_surrogate_key"
LAST_KEY = "incremental_snapshot_primary_key"
MAX_KEY = "incremental_snapshot_maximum_key"
CORRELATION_ID = "incremental_snapshot_correlation_id"


def debezium_gtids(value: Any) -> str:
    """Debezium's `gtids` when it is a MariaDB position or a MySQL GTID set; "" (use
    file/pos) otherwise."""
    text = str(value or "").strip()
    if not text:
        return ""
    try:
        return str(position_of_either(text))
    except (ValueError, TypeError):
        log.warning("Debezium offsets: gtids %r is not a GTID position; resuming from its "
                    "file/pos instead", text)
        return ""


def in_initial_snapshot(data: dict[str, Any]) -> bool:
    """Written during Debezium's own (blocking) snapshot, e.g. `"snapshot": "INITIAL"`."""
    marker = str(data.get("snapshot") or "").lower()  # an incremental one has its own keys
    done = str(data.get("snapshot_completed") or "").lower() == "true"
    return marker not in ("", "false", "incremental") and not done


def snapshot_state(data: dict[str, Any]) -> SnapshotState | None:
    """Debezium's snapshot progress as ours (no throttle: the configured one applies)."""
    raw = data.get(COLLECTIONS)
    if not raw:
        if not in_initial_snapshot(data):
            return None
        log.warning("Debezium offsets: written during Debezium's initial snapshot, which did "
                    "not finish; every captured table is snapshotted again (incremental, "
                    "while streaming from its binlog position)")
        return SnapshotState(id="debezium-initial", initial=True)
    collections = json.loads(raw) if isinstance(raw, str) else raw
    tables = [TableProgress(table=str(c[COLLECTION_ID]),
                            condition=c.get(COLLECTION_CONDITION) or None,
                            surrogate_key=c.get(COLLECTION_SURROGATE_KEY) or None)
              for c in collections]
    if not tables:
        return None
    current = tables[0]
    last_key, max_key = decode_java_key(data.get(LAST_KEY)), decode_java_key(data.get(MAX_KEY))
    if data.get(LAST_KEY) and (last_key is None or max_key is None):
        log.warning("Debezium offsets: the snapshot position in %s cannot be read; its "
                    "snapshot restarts from the beginning (rows already sent come again)",
                    current.table)
    elif last_key is not None:
        current.last_key, current.max_key = last_key, max_key
    log.info("Debezium offsets: incremental snapshot %s continues: %s",
             data.get(CORRELATION_ID), ", ".join(t.table for t in tables))
    return SnapshotState(id=data.get(CORRELATION_ID) or "debezium", tables=tables)


def from_debezium(data: dict[str, Any]) -> ConnectorOffsets:
    offsets = ConnectorOffsets(
        gtids=debezium_gtids(data.get("gtids")), file=str(data.get("file") or ""),
        pos=int(data.get("pos") or 0), event=int(data.get("event") or 0),
        row=int(data.get("row") or 0), server_id=int(data.get("server_id") or 0),
        ts_sec=int(data.get("ts_sec") or 0), snapshot=snapshot_state(data))
    log.info("offsets written by Debezium: gtids=%r file=%s pos=%d (event %d, row %d)",
             offsets.gtids, offsets.file, offsets.pos, offsets.event, offsets.row)
    return offsets
