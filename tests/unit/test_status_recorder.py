"""The status topic's records, as Kafka Connect writes them, on every change of state and
only while this instance leads."""

from __future__ import annotations

import json

from connector.control import EngineView
from connector.kafka.status_topic import StatusRecord
from connector.offsets.value import ConnectorOffsets
from connector.settings.parse import parse_config
from connector.status_recorder import StatusRecorder
from tests.unit.test_supervisor import Written

BASE = {"database.hostname": "replica", "database.user": "cdc", "database.server.id": "5400",
        "topic.prefix": "shop", "bootstrap.servers": "kafka:9092"}
SOLO = parse_config({"name": "c", "config": {**BASE, "ha.enabled": "false",
                                             "rest.port": "8083", "rest.host": "10.0.0.5"}})
HA = parse_config({"name": "c", "config": BASE})
CONNECTOR, TASK = "status-connector-c", "status-task-c-0"


def states(written: Written) -> list[tuple[str, str | None, str | None]]:
    return [(key, None if r is None else r.state, None if r is None else r.trace)
            for key, r in written.records]


def test_a_record_is_connects_json() -> None:
    record = StatusRecord("FAILED", "boom", "10.0.0.5:8083", 3, "0.9.0")
    assert json.loads(record.encode()) == {"state": "FAILED", "trace": "boom",
                                           "worker_id": "10.0.0.5:8083", "generation": 3,
                                           "version": "0.9.0"}
    assert StatusRecord.decode(record.encode()) == record
    older = b'{"state":"RUNNING","trace":null,"worker_id":"w:8083","generation":1}'
    assert StatusRecord.decode(older) == StatusRecord("RUNNING", None, "w:8083", 1)  # 3.x's
    assert StatusRecord.decode(b'{"state": "RUNNING"}') is None  # not the shape: skipped


def test_each_change_is_written_once_as_connect_shows_it() -> None:
    written = Written()
    recorder = StatusRecorder(SOLO, written)
    recorder.observe(EngineView(state="RESTARTING"))
    recorder.observe(EngineView(state="RUNNING", committed=ConnectorOffsets(epoch=4)))
    recorder.observe(EngineView(state="RUNNING"))  # a refresh: nothing new
    recorder.observe(EngineView(state="PAUSED"))
    recorder.observe(EngineView(state="STOPPED"))  # no task while STOPPED: a tombstone
    recorder.observe(EngineView(state="RESTARTING"))
    recorder.observe(EngineView(state="FAILED", trace="reader ended"))  # the task's failure
    assert states(written) == [
        (CONNECTOR, "RESTARTING", None), (TASK, "RESTARTING", None),
        (CONNECTOR, "RUNNING", None), (TASK, "RUNNING", None),
        (CONNECTOR, "PAUSED", None), (TASK, "PAUSED", None),
        (CONNECTOR, "STOPPED", None), (TASK, None, None),
        (CONNECTOR, "RESTARTING", None), (TASK, "RESTARTING", None),
        (CONNECTOR, "RUNNING", None), (TASK, "FAILED", "reader ended")]
    last = written.records[-1][1]
    assert (last.worker_id, last.generation) == ("10.0.0.5:8083", 4)  # the REST worker_id
    recorder.close()  # a FAILED task stays FAILED for whoever looks; the connector is gone
    assert states(written)[-1:] == [(CONNECTOR, "UNASSIGNED", None)]


def test_a_clean_shutdown_leaves_both_unassigned() -> None:
    written = Written()
    recorder = StatusRecorder(SOLO, written)
    recorder.observe(EngineView(state="RUNNING"))
    recorder.close()
    assert states(written)[2:] == [(CONNECTOR, "UNASSIGNED", None), (TASK, "UNASSIGNED", None)]
    recorder.observe(EngineView(state="RUNNING"))  # after close: nothing
    assert len(written.records) == 4


def test_a_standby_writes_nothing_and_a_leader_stops_writing_when_it_steps_down() -> None:
    written = Written()
    recorder = StatusRecorder(HA, written)
    recorder.observe(EngineView(state="UNASSIGNED"))
    recorder.observe(EngineView(state="FAILED", trace="start refused"))  # never led
    recorder.close()
    assert written.records == []
    recorder.lead()
    recorder.observe(EngineView(state="RUNNING"))
    recorder.observe(EngineView(state="UNASSIGNED"))  # between two engines: not written
    recorder.step_down()
    recorder.observe(EngineView(state="RESTARTING"))
    recorder.close()  # the new leader's RUNNING is not overwritten
    assert states(written) == [(CONNECTOR, "RUNNING", None), (TASK, "RUNNING", None)]

