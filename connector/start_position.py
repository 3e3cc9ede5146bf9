"""Where streaming starts: the committed offsets, else a first start's position.

Also the replica session these reads (and the catalog, preflight and launch point) use.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import pymysql

from connector.binlog.reader import PURGED
from connector.flavours import Flavour
from connector.gtid import Position
from connector.launch import LaunchPoint
from connector.offsets.value import ConnectorOffsets
from connector.settings.errors import ConfigError
from connector.settings.model import ConnectorConfig
from connector.snapshot.session import READ_TIMEOUT_S, SNAPSHOT_SESSION_INIT

log = logging.getLogger("gtidmark")
T = TypeVar("T")


def replica_connection(config: ConnectorConfig) -> pymysql.connections.Connection:
    """A read-only session on the replica for positions, catalog reads and preflight."""
    settings = config.mysql_settings()
    settings["password"] = settings.pop("passwd")
    conn = pymysql.connect(**settings, autocommit=True, connect_timeout=10,
                           read_timeout=READ_TIMEOUT_S, init_command=SNAPSHOT_SESSION_INIT)
    with conn.cursor() as cur:
        cur.execute("SET SESSION TRANSACTION READ ONLY")
    return conn


def snapshot_at_start(mode: str, stored: ConnectorOffsets | None) -> bool:
    """Whether this start begins a snapshot of every captured table: `initial` on a first
    start, `always` on every start (streaming still resumes from the offsets), unless the
    offsets hold a snapshot in progress, which goes on instead."""
    if stored is not None and stored.snapshot is not None:
        return False
    return mode == "always" or (mode in ("initial", "when_needed") and stored is None)


def usable_offsets(config: ConnectorConfig, flavour: Flavour,
                   stored: ConnectorOffsets | None) -> ConnectorOffsets | None:
    """`stored`, or None under when_needed when the replica has purged the binlog they name:
    the start is then a first start's (a snapshot of every captured table, streaming from the
    current position), as Debezium's when_needed resets the offsets there."""
    if stored is None or config.snapshot_mode != "when_needed":
        return stored
    gone = _purged(config, flavour, stored)
    if gone is None:
        return stored
    log.warning("snapshot.mode=when_needed: the replica no longer has the binlog for the "
                "committed offsets' %s (purged); a new snapshot of every captured table "
                "starts, streaming from the replica's current position", gone)
    return None


def binlog_purged(config: ConnectorConfig, flavour: Flavour, position: Position) -> bool:
    """Whether the replica has purged transactions after `position`: streaming from it is
    refused (error 1236). MySQL: gtid_purged not within it; MariaDB: the oldest binlog's
    Gtid_list ahead of it in some domain."""
    return not position.covers(_read(config, flavour.oldest_position))


def purged_under_when_needed(config: ConnectorConfig, flavour: Flavour, position: Position,
                             failure: str) -> bool:
    """Whether the reader's `failure` is a purged binlog (purged while the replica was
    away) under when_needed: the engine then stops cleanly and starts again, which snapshots
    anew. The replica is asked again, so a start that would not snapshot never loops here."""
    if config.snapshot_mode != "when_needed" or not failure.startswith(PURGED) \
            or not binlog_purged(config, flavour, position):
        return False
    log.warning("snapshot.mode=when_needed: %s; stopping to start again with a new "
                "snapshot", failure.split(", re-snapshot", 1)[0])
    return True


def _purged(config: ConnectorConfig, flavour: Flavour, stored: ConnectorOffsets) -> str | None:
    """The offsets' position when the replica can no longer stream from it, else None
    (offsets that name no position of this server fail in `start_position`)."""
    if not stored.gtids:
        if not stored.file or stored.file in _read(config, _binlog_files):
            return None
        return f"binlog {stored.file}:{stored.pos}"
    try:
        position = flavour.position(stored.gtids)
    except ValueError:
        return None
    return f"GTID {position}" if binlog_purged(config, flavour, position) else None


def _binlog_files(cursor: Any) -> list[str]:
    cursor.execute("SHOW BINARY LOGS")
    return [str(row[0]) for row in cursor.fetchall()]


def start_position(config: ConnectorConfig, flavour: Flavour, stored: ConnectorOffsets | None,
                   launch: LaunchPoint | None) -> Position:
    """The committed position; on a first start the launch point's (or the replica's now)."""
    if stored is not None:
        gtids = stored.gtids
        if not gtids and stored.file:
            gtids = gtids_at(config, flavour, stored.file, stored.pos)
        log.info("resuming from committed offsets: gtids=%s file=%s pos=%s",
                 gtids, stored.file, stored.pos)
        try:
            return flavour.position(gtids)
        except ValueError as exc:
            raise ConfigError(f"the committed offsets hold gtids {gtids!r}, not a "
                              f"{flavour.name} position ({exc}); is this the server "
                              "they were written for?") from None
    if config.snapshot_mode == "never":
        position = _read(config, flavour.oldest_position)
        log.info("first start, snapshot.mode=never: streaming from the oldest binlog%s",
                 f" (after the purged {position})" if position else "")
        return position
    if launch is not None:
        log.info("first start, snapshot.mode=%s: streaming from the position at launch "
                 "%s (read %.0fs ago)", config.snapshot_mode, launch.position, launch.age())
        return flavour.position(launch.position)
    position = _read(config, flavour.current_position)
    log.info("first start, snapshot.mode=%s: streaming from the current position %s",
             config.snapshot_mode, position)
    return position


def _read(config: ConnectorConfig, read: Callable[[Any], T]) -> T:
    """`read` on a cursor of a new replica session."""
    conn = replica_connection(config)
    try:
        with conn.cursor() as cur:
            return read(cur)
    finally:
        conn.close()


def gtids_at(config: ConnectorConfig, flavour: Flavour, file: str, pos: int) -> str:
    """The GTID position at a binlog file/pos (offsets without GTIDs, e.g. Debezium's)."""
    conn = replica_connection(config)
    try:
        with conn.cursor() as cur:
            gtids = flavour.gtids_at(cur, file, pos)
    finally:
        conn.close()
    if gtids is None:
        raise RuntimeError(f"the replica cannot map binlog {file}:{pos} from the committed "
                           "offsets to a GTID position (binlog purged, not an event "
                           "boundary, or a MySQL server: offsets need their gtids)")
    log.info("binlog %s:%d is GTID position %r", file, pos, gtids)
    return gtids
