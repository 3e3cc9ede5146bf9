"""`gtidmark run`: signals, the leadership lease, and one Engine after another.

An instance waits for the lease (`ha.enabled`), runs an Engine until it stops, fails or
steps down, and in the last case waits for the lease again. With `rest.port` the REST
supervisor drives the same loop and also answers Kafka Connect's REST API.
"""

from __future__ import annotations

import logging
import signal
import threading
from typing import Any

from connector.config import ConfigError, ConnectorConfig
from connector.engine import STEPPED_DOWN, Engine
from connector.gcpolicy import tune_for_streaming
from connector.launch import LaunchPoint, read_launch_point
from connector.lease import Lease
from connector.start_position import replica_connection
from signals.channel import ensure_signal_topic, signal_client_settings

log = logging.getLogger("gtidmark")


def open_lease(config: ConnectorConfig) -> Lease:
    """Join the leader group over the signal topic (created with one partition if missing)."""
    settings = signal_client_settings(config, config.consumer_settings())
    ensure_signal_topic(settings, config.signal_kafka_topic, 30.0)
    lease = Lease(settings, f"{config.name}-leader", config.signal_kafka_topic,
                  config.ha_session_timeout_ms)
    lease.start()
    return lease


def wait_for_lease(lease: Lease | None, stopping: threading.Event) -> bool:
    """True when this instance may lead (at once without HA); False when stopping first."""
    if lease is None:
        return True
    log.info("standby: waiting for the lease (group %s)", lease.group)
    if lease.acquire(stopping):
        return True
    log.info("stopped while standby")
    return False


def run_connector(config: ConnectorConfig) -> int:
    """Stream until SIGTERM/SIGINT, then flush, commit and exit 0 (or 1, or 2)."""
    tune_for_streaming()  # this process is the connector's: its garbage collection too
    if config.rest_port:
        from connector.rest.runner import run_supervised

        return run_supervised(config)  # serves REST first, then joins the group
    launch = read_launch_point(config, lambda: replica_connection(config))
    try:
        lease = join_group(config)
    except LeaseUnavailable:
        return 1
    try:
        return _run_plain(config, lease, launch)
    finally:
        if lease is not None:
            lease.close()


class LeaseUnavailable(RuntimeError):
    """The leader group could not be joined; the reason is logged."""


def join_group(config: ConnectorConfig) -> Lease | None:
    """The lease of this connector's group, or None when `ha.enabled` is false."""
    if not config.ha_enabled:
        return None
    try:
        return open_lease(config)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - one line for the operator
        log.error("cannot start: %s", " ".join(str(exc).split()))
        raise LeaseUnavailable(str(exc)) from None


def _run_plain(config: ConnectorConfig, lease: Lease | None, launch: LaunchPoint | None
               ) -> int:
    stopping = threading.Event()

    def request_stop(signum: int, _frame: Any) -> None:
        log.info("received %s, stopping", signal.Signals(signum).name)
        stopping.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    led = False  # an Engine of this process stepped down before
    while wait_for_lease(lease, stopping):
        code = Engine(config, stopping=stopping, lease=lease, retry_start=led,
                      launch=None if led else launch).run()
        if code != STEPPED_DOWN:
            return code
        led = True
    return 0
