"""`gtidmark run`: one Supervisor, with the REST server when `rest.port` is set.

SIGTERM/SIGINT ask the Supervisor to stop: the running Engine flushes and commits.
"""

from __future__ import annotations

import logging
import signal
from typing import Any

from connector.gcpolicy import tune_for_streaming
from connector.settings.model import ConnectorConfig
from connector.supervisor import Supervisor


def run_connector(config: ConnectorConfig) -> int:
    """Stream until SIGTERM/SIGINT, then flush, commit and exit 0 (or 1, or 2)."""
    tune_for_streaming()  # this process is the connector's: its garbage collection too
    if not config.rest_port:
        supervisor = Supervisor(config)
        stop_on_signals(supervisor, logging.getLogger("gtidmark"))
        return supervisor.run()
    from connector.control import EngineControl
    from connector.rest.server import RestServer

    control = EngineControl()
    supervisor = Supervisor(config, control)
    stop_on_signals(supervisor, logging.getLogger("gtidmark.rest"))
    server = RestServer(config, control)
    server.start()  # serves REST first, then joins the group
    try:
        return supervisor.run()
    finally:
        server.stop()


def stop_on_signals(supervisor: Supervisor, log: logging.Logger) -> None:
    """SIGTERM and SIGINT stop the supervisor with one line."""

    def request_stop(signum: int, _frame: Any) -> None:
        log.info("received %s, stopping", signal.Signals(signum).name)
        supervisor.request_stop()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
