"""Debezium settings that choose between two implementations where gtidmark has one that
gives the same records for either value: checked, then noted in one INFO line.

`read.only=false` (Debezium's default) writes incremental-snapshot watermarks to the
signal table; gtidmark never writes to the database and reads its watermarks from the
replica's GTID positions, which changes nothing in the records. `incremental.snapshot.
allow.schema.changes` (Debezium's default false) makes Debezium re-select a chunk when a
schema change comes during it; gtidmark always does: a chunk whose columns changed, or a
DDL inside its window, has the table read again with its new columns.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

NOTES = {
    ("read.only", False): "read.only=false (Debezium's default: snapshot watermarks written "
                          "to the signal table) runs as true: gtidmark never writes to the "
                          "database, its watermarks are the replica's GTID positions; the "
                          "records are the same",
    ("read.only", True): None,
    ("incremental.snapshot.allow.schema.changes", False): (
        "incremental.snapshot.allow.schema.changes=false is not needed: gtidmark always "
        "reads a table again with its new columns when a schema change comes during its "
        "snapshot, so no chunk is written with the old ones"),
    ("incremental.snapshot.allow.schema.changes", True): (
        "incremental.snapshot.allow.schema.changes=true is what gtidmark always does: a "
        "table whose schema changes during its snapshot is read again with its new columns"),
}


def boolean(value: Any) -> bool:
    """Kafka Connect's BOOLEAN: true or false, any case; ValueError otherwise."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError("a boolean, true or false")
    return text == "true"


def note(key: str, value: Any) -> bool:
    """`key`'s value, checked; what gtidmark does with it said in one INFO line."""
    checked = boolean(value)
    line = NOTES[(key, checked)]
    if line is not None:
        log.info("config: %s", line)
    return checked
