"""signal.enabled.channels: kafka reads the signal topic (the default here), a value without
it reads none, source reads the signal table (signal.data.collection, required with it), and
Debezium's other channels stop the start with one line."""

from __future__ import annotations

import json
import logging
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from connector.control import EngineControl
from connector.rest.connect import connector_config
from connector.rest.routes import RestApp
from connector.settings.errors import ConfigError
from connector.settings.model import ConnectorConfig
from signals.channel import SignalChannel, SignalChannelError
from signals.models import Signal
from signals.send import NOT_READ, build_signal, send_signal
from tests.unit.test_config import cfg, doc, run_cli


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def no_broker(channels: str) -> ConnectorConfig:
    """Nothing listens at bootstrap.servers: any Kafka read would wait out its timeout."""
    config: ConnectorConfig = cfg(signal__enabled__channels=channels,
                                  bootstrap__servers=f"127.0.0.1:{closed_port()}")
    return config


@pytest.mark.parametrize(("value", "reads_kafka"), [
    (None, True), ("kafka", True), (" KAFKA ", True), ("", False), (",", False),
])
def test_kafka_in_the_list_is_what_reads_the_signal_topic(value: str | None,
                                                          reads_kafka: bool) -> None:
    assert cfg(signal__enabled__channels=value).kafka_signals is reads_kafka


USE = ("gtidmark reads signals from kafka (the signal topic) and source (the signal table): "
       "use those, or leave it out")
NO_TABLE = ("source reads the signals INSERTed into the signal table: set "
            "signal.data.collection to it (<database>.<table>)")


@pytest.mark.parametrize(("channels", "kafka", "table"), [
    ("source", False, "shop.debezium_signal"), ("source,kafka", True, "shop.debezium_signal"),
    (" Kafka , SOURCE ", True, "shop.debezium_signal"), ("kafka", True, None),
])
def test_source_reads_the_signal_table_and_kafka_the_topic(channels: str, kafka: bool,
                                                           table: str | None) -> None:
    config = cfg(signal__enabled__channels=channels,
                 signal__data__collection=" shop.debezium_signal ")
    assert (config.kafka_signals, config.source_signal_table) == (kafka, table)


@pytest.mark.parametrize(("value", "reason"), [
    ("source", f"{NO_TABLE} (got 'source')"),
    ("source,kafka", f"{NO_TABLE} (got 'source,kafka')"),
    ("kafka,jmx", (f"channel 'jmx' (a JMX operation) is not read: gtidmark has no JVM; {USE} "
                  "(got 'kafka,jmx')")),
    ("file", f"channel 'file' (a file Debezium polls) is not read; {USE} (got 'file')"),
    ("in-process", (f"channel 'in-process' (Debezium Engine's in-process API) is not read; "
                   f"{USE} (got 'in-process')")),
    ("kafak", ("unknown channel 'kafak' (Debezium's: kafka, source, file, jmx, in-process) "
              "(got 'kafak')")),
])
def test_other_channels_are_refused_with_one_line(value: str, reason: str) -> None:
    with pytest.raises(ConfigError) as err:
        cfg(signal__enabled__channels=value)
    assert str(err.value) == f"config: signal.enabled.channels: {reason}"


@pytest.mark.parametrize("value", ["shop", "shop.a.b", ".t", "shop."])
def test_a_signal_table_not_named_db_dot_table_is_refused(value: str) -> None:
    with pytest.raises(ConfigError) as err:
        cfg(signal__enabled__channels="source", signal__data__collection=value)
    assert str(err.value) == ("config: signal.data.collection: one table, <database>.<table> "
                              f"(Debezium's MySQL form) (got {value!r})")


def test_an_empty_signal_table_is_unset_as_in_debezium() -> None:
    assert cfg(signal__data__collection="").signal_data_collection is None
    with pytest.raises(ConfigError, match="set signal.data.collection"):
        cfg(signal__enabled__channels="source", signal__data__collection=" ")


@pytest.mark.parametrize(("channels", "reason"), [
    ("source", f"{NO_TABLE} (got 'source')"),
    ("kafka,file", (f"channel 'file' (a file Debezium polls) is not read; {USE} "
                   "(got 'kafka,file')")),
    ("sorce", ("unknown channel 'sorce' (Debezium's: kafka, source, file, jmx, in-process) "
              "(got 'sorce')")),
])
def test_a_refused_channel_exits_2_with_one_line(tmp_path: Path, channels: str,
                                                 reason: str) -> None:
    path = tmp_path / "connector.json"
    path.write_text(json.dumps(doc(signal__enabled__channels=channels)))
    result = run_cli("run", "--config", str(path))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"error: {path}: signal.enabled.channels: {reason}"]


def test_without_kafka_the_channel_reads_nothing_and_keeps_no_offset(
        caplog: pytest.LogCaptureFixture) -> None:
    """No broker answers: a channel that tried to read would fail after its timeout."""
    channel = SignalChannel(no_broker(""))
    started = time.monotonic()
    with caplog.at_level(logging.INFO, logger="signals.channel"):
        channel.open(7, timeout=5)
        assert channel.fetch(1) == [] and channel.poll(1) == []
    assert time.monotonic() - started < 1
    assert channel.next_offset is None and channel.unfinished is None
    assert [r.getMessage() for r in caplog.records] == [
        "signal.enabled.channels has no kafka: signal topic shop-signal is not read"]
    channel.close()


def test_with_kafka_the_channel_reads_the_topic() -> None:
    """The same channel with kafka enabled does go to the broker (and fails: none there)."""
    channel = SignalChannel(no_broker("kafka"))
    with pytest.raises(SignalChannelError, match="shop-signal"):
        channel.open(7, timeout=2)
    channel.close()


def test_gtidmark_signal_is_refused_when_the_connector_reads_no_topic(tmp_path: Path) -> None:
    config = no_broker("")
    with pytest.raises(ConfigError) as err:
        send_signal(config, build_signal("log", message="hi"), timeout=2)
    assert str(err.value) == NOT_READ
    path = tmp_path / "connector.json"
    path.write_text(json.dumps(doc(signal__enabled__channels="")))
    result = run_cli("signal", "--config", str(path), "log", "hello")
    assert (result.returncode, result.stderr.splitlines()) == (2, [f"error: {NOT_READ}"])


def test_rest_signals_answer_409_and_send_nothing_without_kafka() -> None:
    sent: list[Signal] = []

    def send(_config: Any, signal: Signal) -> int:
        sent.append(signal)
        return 0
    app = RestApp(no_broker(""), EngineControl(), send, lambda: None)
    reply = app.handle("POST", "/connectors/shop-connector/signals", {},
                       json.dumps({"type": "log", "data": {"message": "hi"}}).encode())
    assert (reply.status, reply.body["message"], sent) == (409, NOT_READ, [])


def test_rest_config_shows_the_channels_as_given() -> None:
    assert connector_config(cfg(signal__enabled__channels="kafka"))[
        "signal.enabled.channels"] == "kafka"
    assert connector_config(cfg(signal__enabled__channels=""))["signal.enabled.channels"] == ""
