"""signal.enabled.channels against a running `gtidmark run`: without kafka no signal is read,
the HA lease still holds over the signal topic, and a later start with kafka reads only
signals sent after it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from connector.settings.parse import parse_config
from signals.send import build_signal, send_signal
from tests.connector_tools import ConnectorProcess, connector_document
from tests.kafka_services import Broker
from tests.services import MariaDbPair

pytestmark = pytest.mark.integration

POLLS = 2.0  # ten of the engine's signal polls (SIGNAL_INTERVAL 0.2 s)


def test_without_kafka_no_signal_is_read_and_a_later_start_reads_only_newer_ones(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    document = connector_document(mariadb, broker, unique_name, signal__enabled__channels="")
    assert document["config"]["ha.session.timeout.ms"]  # HA on: the lease uses the topic
    proc = ConnectorProcess(document, tmp_path)
    proc.start()
    try:
        proc.wait_log("binlog stream open", timeout=90)  # after the lease was taken
        assert (f"signal.enabled.channels has no kafka: signal topic {unique_name}-signal "
                "is not read") in proc.log()
        sender = parse_config({**document, "config": {
            **document["config"], "signal.enabled.channels": "kafka"}})
        send_signal(sender, build_signal("log", message="sent while not read"))
        time.sleep(POLLS)
        assert "sent while not read" not in proc.log()
        assert proc.stop() == 0

        proc.config_path.write_text(json.dumps({**document, "config": {
            **document["config"], "signal.enabled.channels": "kafka"}}))
        proc.start()
        proc.wait_log("binlog stream open", timeout=90)
        send_signal(sender, build_signal("log", message="sent while read"))
        proc.wait_log("signal log: sent while read", timeout=30)
        assert "sent while not read" not in proc.log()
    finally:
        proc.ensure_stopped()
