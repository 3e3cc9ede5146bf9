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

from connector.config import ConfigError, ConnectorConfig, flavour_of_server
from connector.engine import STEPPED_DOWN, Engine, replica_connection, wait_to_retry_start
from connector.lease import Lease
from signals.channel import ensure_signal_topic, signal_client_settings

log = logging.getLogger("gtidmark")


def detect_flavour(config: ConnectorConfig) -> ConnectorConfig:
    """The config with the flavour the server has (any connector.class name works)."""
    conn = replica_connection(config)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW GLOBAL VARIABLES LIKE 'gtid\\_binlog\\_pos'")
            variables = {str(row[0]): row[1] for row in cur.fetchall()}
    finally:
        conn.close()
    flavour = flavour_of_server(variables)
    if flavour != config.flavour:
        log.info("the server is %s: events are written as Debezium's %s connector writes "
                 "them (connector.class %s is not used)", flavour, flavour,
                 config.connector_class)
    return config.with_server_flavour(flavour)


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
    if config.rest_port:
        from connector.rest.runner import run_supervised

        return run_supervised(config)  # serves REST first, then joins the group
    try:
        lease = join_group(config)
    except LeaseUnavailable:
        return 1
    try:
        return _run_plain(config, lease)
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


def _run_plain(config: ConnectorConfig, lease: Lease | None) -> int:
    stopping = threading.Event()

    def request_stop(signum: int, _frame: Any) -> None:
        log.info("received %s, stopping", signal.Signals(signum).name)
        stopping.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    led = False  # an Engine of this process stepped down before
    while wait_for_lease(lease, stopping):
        try:
            code = Engine(detect_flavour(config), stopping=stopping, lease=lease,
                          retry_start=led).run()
        except ConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - one line for the operator
            line = " ".join(str(exc).split())
            if led:
                wait_to_retry_start(line, stopping)
                continue
            log.error("cannot start: %s", line)
            return 1
        if code != STEPPED_DOWN:
            return code
        led = True
    return 0
