"""The state this instance shows, written to the status topic on every change while it leads.

Every state passes through `EngineControl.publish` (the Engine's RUNNING/PAUSED, the
Supervisor's RESTARTING/STOPPED/FAILED); the Supervisor hangs `observe` there and says
when this instance starts and stops leading. As in Connect, a failure is the task's (the
connector stays RUNNING), a STOPPED connector has no task (tombstone), and a clean
shutdown leaves both UNASSIGNED while a FAILED task stays FAILED for whoever looks. A
standby writes nothing: it would hide the leader's state.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from connector import __version__
from connector.control import EngineView, State
from connector.kafka.status_topic import StatusRecord, connector_key, task_key
from connector.leadership.lease import client_id
from connector.settings.model import ConnectorConfig

log = logging.getLogger("gtidmark")

FLUSH_TIMEOUT = 5.0


class Writer(Protocol):
    def put(self, key: str, record: StatusRecord | None) -> None: ...

    def flush(self, timeout: float) -> bool: ...


def worker_id(config: ConnectorConfig) -> str:
    """The REST API's worker_id (host:port) when it is on, else the lease group's client id
    (gtidmark-<host>-<pid>), which `gtidmark status` finds among the group's members."""
    if config.rest_port:
        from connector.rest.connect import worker_id as rest_worker_id

        return rest_worker_id(config)
    return client_id()


def shown_states(state: State) -> tuple[State, State | None]:
    """The connector's and task's states for the view's state (None: no task)."""
    if state == "FAILED":
        return "RUNNING", "FAILED"
    if state == "STOPPED":
        return "STOPPED", None
    return state, state


class StatusRecorder:
    """Writes the connector's and task's records when they change, only while leading."""

    def __init__(self, config: ConnectorConfig, writer: Writer) -> None:
        self._name = config.name
        self._writer = writer
        self._worker = worker_id(config)
        self._lock = threading.Lock()
        self._leading = not config.ha_enabled  # without the lease group: the only instance
        self._generation = 0
        self._written: dict[str, StatusRecord | None] = {}

    def lead(self) -> None:
        with self._lock:
            self._leading = True

    def observe(self, view: EngineView) -> None:
        """Called with every published view; writes what changed. UNASSIGNED (a standby,
        or between two engines) is written only by `close`."""
        with self._lock:
            if view.committed is not None:
                self._generation = max(self._generation, view.committed.epoch)
            if not self._leading or view.state == "UNASSIGNED":
                return
            connector, task = shown_states(view.state)
            self._put(connector_key(self._name), connector, None)
            self._put(task_key(self._name), task, view.trace if task == "FAILED" else None)

    def _put(self, key: str, state: State | None, trace: str | None) -> None:
        record = None if state is None else StatusRecord(state, trace, self._worker,
                                                         self._generation, __version__)
        if key in self._written and self._written[key] == record:
            return
        if record is None and key not in self._written:
            return  # no task written yet: nothing to remove
        self._written[key] = record
        self._writer.put(key, record)

    def step_down(self) -> None:
        """Another instance leads from now on: what was written lands before it writes."""
        with self._lock:
            was, self._leading = self._leading, False
        if was:
            self._flush()

    def close(self) -> None:
        """A shutdown while leading: both UNASSIGNED, a FAILED or removed task left as is."""
        with self._lock:
            if self._leading:
                task = self._written.get(task_key(self._name))
                self._put(connector_key(self._name), "UNASSIGNED", None)
                if task is not None and task.state != "FAILED":
                    self._put(task_key(self._name), "UNASSIGNED", None)
            self._leading = False
        self._flush()

    def _flush(self) -> None:
        if not self._writer.flush(FLUSH_TIMEOUT):
            log.warning("the connector's state was not all written to the status topic "
                        "within %.0fs", FLUSH_TIMEOUT)
