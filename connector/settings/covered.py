"""Debezium settings that choose between two implementations where gtidmark has one that
gives the same records for either value: checked, then noted in one INFO line.

`read.only=false` (Debezium's default) writes incremental-snapshot watermarks to the
signal table; gtidmark never writes to the database and reads its watermarks from the
replica's GTID positions, which changes nothing in the records. `incremental.snapshot.
allow.schema.changes` (Debezium's default false) makes Debezium re-select a chunk when a
schema change comes during it; gtidmark always does: a chunk whose columns changed, or a
DDL inside its window, has the table read again with its new columns.

`ACCEPTED`: keys of every Debezium connector JSON that name a mechanism gtidmark does not
have (snapshot locks, poll batches) or what it does anyway (the Kafka schema history):
checked as Debezium checks them (a bad value exits 2), their meaning here in one INFO line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
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


KAFKA_HISTORY = "io.debezium.storage.kafka.history.KafkaSchemaHistory"
LOCKING_MODES = ("minimal", "minimal_percona", "minimal_percona_no_table_locks", "extended",
                 "none", "custom")


def _positive(value: Any) -> str:
    """Debezium's positive integer settings (max.batch.size, poll.interval.ms)."""
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ValueError("a positive integer") from None
    if number < 1 or isinstance(value, bool):
        raise ValueError("a positive integer")
    return str(number)


def _locking_mode(value: Any) -> str:
    text = str(value).strip().lower()
    if text not in LOCKING_MODES:
        raise ValueError(f"one of {', '.join(LOCKING_MODES)}")
    return text


def _history_class(value: Any) -> str:
    text = str(value).strip()
    if text != KAFKA_HISTORY:
        raise ValueError(f"gtidmark keeps the schema history in a Kafka topic ({KAFKA_HISTORY}, "
                         "schema.history.internal.kafka.topic); this class would keep it "
                         f"elsewhere, where it would not be found: use {KAFKA_HISTORY} or "
                         "leave the key out")
    return text


ACCEPTED: dict[str, tuple[Callable[[Any], str], str]] = {
    "schema.history.internal": (_history_class, (
        "schema.history.internal={} is what gtidmark does: the schema history is the Kafka "
        "topic schema.history.internal.kafka.topic")),
    "snapshot.locking.mode": (_locking_mode, (
        "snapshot.locking.mode={} has nothing to lock here: gtidmark takes no lock, its "
        "snapshots are chunks between GTID watermarks on the replica")),
    "max.batch.size": (_positive, (
        "max.batch.size={} has no poll batch to size here: each transaction goes to the "
        "Kafka producer as it is read (Kafka batches: producer.batch.size, "
        "producer.linger.ms)")),
    "poll.interval.ms": (_positive, (
        "poll.interval.ms={} has no poll to wait for here: the engine takes a change as soon "
        "as the binlog reader hands it over")),
}


def accept(key: str, value: Any) -> None:
    """`value` of an ACCEPTED key checked (ValueError if Debezium would refuse it too) and
    what it means here said in one INFO line."""
    check, line = ACCEPTED[key]
    log.info("config: %s", line.format(check(value)))
