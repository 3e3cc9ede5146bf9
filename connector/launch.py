"""Where a first start begins: the replica's position and the signal topic's end as of the
moment `gtidmark run` was launched, not as of the lease, which a standby may wait for.

Rows written and signals sent after the launch are then never skipped by a first start,
however long the wait (README "High availability").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from connector.flavours import server_flavour
from connector.settings.errors import ConfigError
from connector.settings.model import ConnectorConfig
from signals.channel import SignalChannel

log = logging.getLogger("gtidmark")


@dataclass(frozen=True, slots=True)
class LaunchPoint:
    position: str  # the replica's stream position, in its flavour's text form
    # The signal topic's end offset: the first signal a first start reads (None: not read).
    signal_end: int | None
    at: float  # wall-clock time it was read

    def age(self) -> float:
        return max(0.0, time.time() - self.at)


def read_launch_point(config: ConnectorConfig, connect: Callable[[], Any]
                      ) -> LaunchPoint | None:
    """The launch point, or None (logged) when the replica or the broker cannot say yet:
    a first start then takes its positions when it starts, as before."""
    try:
        conn = connect()
        try:
            with conn.cursor() as cur:
                position = str(server_flavour(cur).current_position(cur))
        finally:
            conn.close()
        with SignalChannel(config) as signals:
            if signals.enabled:
                signals.open(None)  # a first start's: at the topic's end
            signal_end = signals.next_offset
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - the start reports the cause again
        log.warning("cannot read the launch position yet (%s): a first start takes the "
                    "position it finds when it starts", " ".join(str(exc).split()))
        return None
    return LaunchPoint(position, signal_end, time.time())
