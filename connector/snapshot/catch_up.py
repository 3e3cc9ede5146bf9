"""Before a chunk is read: the replica has applied what the stream has already sent.

A start from offsets ahead of the replica (written by a Debezium that read the primary, or
on a replica further on before a failover) streams from there while the replica's applier
is still behind: a chunk read then holds rows older than change events already in Kafka,
and its window closes at once. So the chunk reader waits until the replica has applied
the stream's position, with a line when it starts, every PROGRESS_S and when it is done.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from connector.flavours import Flavour
from connector.gtid import Position
from connector.snapshot.session import Session

log = logging.getLogger("gtidmark.snapshot")

POLL_S = 0.5
PROGRESS_S = 10.0


def wait_applied(session: Session, flavour: Flavour, streamed: Position,
                 sleep: Callable[[float], None] = time.sleep) -> None:
    """Return once the server has applied all of `streamed` it ever will."""
    missing = _unapplied(session, flavour, streamed)
    if not missing:
        return
    log.info("the replica has not applied %s of the stream's position yet (the offsets are "
             "ahead of it): snapshot chunks wait until it has", missing)
    started = last = time.monotonic()
    while missing:
        if time.monotonic() - last >= PROGRESS_S:
            last = time.monotonic()
            log.info("snapshot chunks still waiting for the replica to apply %s (%.0fs)",
                     missing, last - started)
        sleep(POLL_S)
        missing = _unapplied(session, flavour, streamed)
    log.info("the replica has applied the stream's position; snapshot chunks go on "
             "(waited %.0fs)", time.monotonic() - started)


def _unapplied(session: Session, flavour: Flavour, streamed: Position) -> str:
    with session.cursor() as cur:
        return flavour.unapplied(cur, streamed)
