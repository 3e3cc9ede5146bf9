"""A broker that is not there: the one error line naming it and exit 1, no librdkafka line
(its failures noted at DEBUG only); a client that is not a probe warns once."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from connector.kafka.client_log import KafkaLog, connection_failure


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port bound but not listening: connecting is refused at once, and no one takes it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def connector_file(tmp_path: Path, port: int) -> Path:
    path = tmp_path / "connector.json"
    path.write_text(json.dumps({"name": "shop", "config": {
        "database.hostname": "127.0.0.1", "database.user": "cdc", "database.server.id": "5400",
        "topic.prefix": "shop", "bootstrap.servers": f"127.0.0.1:{port}",
        "consumer.socket.timeout.ms": "2000"}}))
    return path


def test_status_against_a_closed_port_is_one_line_and_no_librdkafka_line(
        tmp_path: Path, closed_port: int) -> None:
    result = subprocess.run([sys.executable, "-m", "connector.cli", "status", "--config",
                             str(connector_file(tmp_path, closed_port))],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        (f"error: cannot reach Kafka at 127.0.0.1:{closed_port} (bootstrap.servers): "
         "connection refused")]
    assert result.stdout == ""


LINE = ("[thrd:kafka:9092/bootstrap]: kafka:9092/bootstrap: Connect to ipv4#10.0.0.5:9092 "
        "failed: Connection refused (after 0ms in state CONNECT)")


def test_repeated_connection_failures_are_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    target = logging.getLogger("test.kafka_log")
    with caplog.at_level(logging.DEBUG, logger="test.kafka_log"):
        for client in ("rdkafka#consumer-1", "rdkafka#producer-2"):
            for _ in range(50):
                KafkaLog(target).log(logging.ERROR, "%s [%s] %s", "FAIL", client, LINE)
        KafkaLog(target).log(logging.WARNING, "%s [%s] %s", "CONFWARN", "rdkafka#consumer-1",
                             "Configuration property x is a producer property")
    levels = [r.levelno for r in caplog.records]
    assert levels.count(logging.WARNING) == 2  # the first failure and the other line
    assert levels.count(logging.DEBUG) == 99
    assert connection_failure("kafka:9092") == "Connection refused"
    assert connection_failure("other:9092") is None


def test_spark_apply_against_a_closed_port_is_one_line_and_no_librdkafka_line(
        tmp_path: Path, closed_port: int) -> None:
    """Checked before Spark starts; the address is named by the option it came from."""
    result = subprocess.run([sys.executable, "-m", "connector.cli", "spark-apply", "--once",
                             "--topic-pattern", r"shop\..+", "--bootstrap-servers",
                             f"127.0.0.1:{closed_port}", "--warehouse", str(tmp_path / "wh"),
                             "--kafka-conf", "socket.timeout.ms=2000"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        (f"error: cannot reach Kafka at 127.0.0.1:{closed_port} (--bootstrap-servers): "
         "connection refused")]


def test_a_planning_request_that_fails_names_itself(closed_port: int) -> None:
    """The broker gone after the start: the job's error line says which request failed."""
    from spark_consumer.reading.planner import KafkaRequestFailed, partitions_of, resolve_topics

    conf = {"bootstrap.servers": f"127.0.0.1:{closed_port}"}
    with pytest.raises(KafkaRequestFailed, match=rf"^the topic list from Kafka at "
                                                 rf"127\.0\.0\.1:{closed_port}: "):
        resolve_topics(conf, None, r"shop\..+", timeout=0.5)
    with pytest.raises(KafkaRequestFailed, match=r"^topic shop\.shop\.t from Kafka at "):
        partitions_of(conf, ["shop.shop.t"], timeout=0.5)


def test_a_failure_with_suppressed_repeats_has_the_same_reason() -> None:
    """librdkafka's "(after 0ms in state CONNECT, 1 identical error(s) suppressed)" tail is
    cut like the plain one: the error line once ended with it."""
    line = ("[thrd:kafka2:9092/bootstrap]: kafka2:9092/bootstrap: Connect to ipv4#10.0.0.6:9092 "
            "failed: Connection refused (after 0ms in state CONNECT, 1 identical error(s) "
            "suppressed)")
    KafkaLog(logging.getLogger("test.kafka_log")).log(logging.ERROR, "%s [%s] %s", "FAIL",
                                                      "rdkafka#consumer-1", line)
    assert connection_failure("kafka2:9092") == "Connection refused"
