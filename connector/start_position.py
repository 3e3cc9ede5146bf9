"""Where streaming starts: the committed offsets, else a first start's position.

Also the replica session these reads (and the catalog, preflight and launch point) use.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pymysql

from connector.flavours import Flavour
from connector.gtid import Position
from connector.launch import LaunchPoint
from connector.offsets.value import ConnectorOffsets
from connector.settings.errors import ConfigError
from connector.settings.model import ConnectorConfig
from connector.snapshot.session import READ_TIMEOUT_S, SNAPSHOT_SESSION_INIT

log = logging.getLogger("gtidmark")


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
    return mode == "always" or (mode == "initial" and stored is None)


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


def _read(config: ConnectorConfig, read: Callable[[Any], Position]) -> Position:
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
