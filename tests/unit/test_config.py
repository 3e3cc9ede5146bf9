"""Configuration: good files load, bad ones exit 2 with one line naming the key."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from connector.flavours import flavour_of_server
from connector.settings.errors import ConfigError
from connector.settings.parse import parse_config, redact

BASE: dict[str, Any] = {
    "connector.class": "io.debezium.connector.mysql.MySqlConnector",
    "database.hostname": "replica.example",
    "database.port": "3307",
    "database.user": "cdc",
    "database.password": "hunter2-very-secret",
    "database.server.id": "5400",
    "topic.prefix": "shop",
    "bootstrap.servers": "kafka:9092",
}


def doc(**overrides: Any) -> dict[str, Any]:
    config = {**BASE, **{k.replace("__", "."): v for k, v in overrides.items()}}
    return {"name": "shop-connector", "config": {k: v for k, v in config.items() if v is not None}}


def cfg(**overrides: Any) -> Any:
    return parse_config(doc(**overrides))


def test_defaults_follow_debezium() -> None:
    c = parse_config(doc())
    assert (c.port, c.read_only, c.snapshot_mode, c.chunk_size) == (3307, True, "initial", 1024)
    assert c.tombstones_on_delete is True and c.decimal_handling_mode == "precise"
    assert c.signal_kafka_topic == "shop-signal"
    assert c.heartbeat_topic == "__debezium-heartbeat.shop"
    assert c.key_schemas_enable and c.value_schemas_enable


def test_lists_and_passthrough() -> None:
    c = parse_config({"name": "n", "config": {**BASE, "table.include.list": "app.a, app.b",
                                              "producer.linger.ms": 20,
                                              "consumer.fetch.min.bytes": "1"}})
    assert c.table_include_list == ["app.a", "app.b"]
    assert c.producer_settings()["linger.ms"] == "20"
    assert c.consumer_settings()["fetch.min.bytes"] == "1"


@pytest.mark.parametrize(
    ("overrides", "key", "reason"),
    [
        ({"database__port": "abc"}, "database.port", "valid integer"),
        ({"database__port": "70000"}, "database.port", "less than or equal"),
        ({"database__hostname": None}, "database.hostname", "required"),
        ({"topic__prefix": None}, "topic.prefix", "required"),
        ({"database__server__id": "0"}, "database.server.id", "greater than or equal"),
        ({"snapshot__mode": "sometimes"}, "snapshot.mode",
         "one of initial, no_data, never, always"),
        ({"decimal__handling__mode": "float"}, "decimal.handling.mode", "precise"),
        ({"incremental__snapshot__chunk__size": "0"}, "incremental.snapshot.chunk.size",
         "greater than"),
        ({"table__include__list": "app.(orders"}, "table.include.list", "regular expression"),
        ({"read__only": "perhaps"}, "read.only", "boolean"),
        ({"table__include__list": "a.b", "table__exclude__list": "c.d"}, "config",
         "exclusive"),
        ({"rest__port": "65536"}, "rest.port", "less than or equal"),
        ({"rest__basic__auth__user": "admin"}, "config",
         "rest.basic.auth.user and rest.basic.auth.password go together"),
    ],
)
def test_bad_values_name_the_key(overrides: dict[str, Any], key: str, reason: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(doc(**overrides))
    message = str(err.value)
    assert f": {key}: " in message or (key == "config" and reason in message)
    assert reason in message
    assert "\n" not in message
    assert "hunter2" not in message


@pytest.mark.parametrize("document", [[], {"config": {}}, {"name": "x"}, {"name": "", "config": {}}])
def test_bad_document_shape(document: Any) -> None:
    with pytest.raises(ConfigError):
        parse_config(document)


def test_unknown_key_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        parse_config({"name": "n", "config": {**BASE, "frobnicate": "yes"}})
    assert [r.getMessage() for r in caplog.records] == ["config: unknown key 'frobnicate' ignored"]


def test_password_never_printed() -> None:
    c = parse_config(doc())
    assert "hunter2" not in repr(c) and "hunter2" not in str(c)
    assert redact({"database.password": "hunter2", "x": 1}) == {"database.password": "********",
                                                                "x": 1}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "connector.cli", *args], capture_output=True,
                          text=True, timeout=60, check=False)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps(doc(database__port="x")), "database.port"),
        (json.dumps(doc(topic__prefix=None)), "topic.prefix: required"),
    ],
)
def test_run_with_bad_file_exits_2(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "connector.json"
    path.write_text(content)
    result = run_cli("run", "--config", str(path))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0]
    assert "hunter2" not in result.stderr + result.stdout


def test_a_file_that_is_not_utf8_exits_2_with_one_line(tmp_path: Path) -> None:
    """A Latin-1 password (0xe9, é) was a UnicodeDecodeError traceback and exit 1."""
    path = tmp_path / "connector.json"
    path.write_bytes(json.dumps(doc()).replace("hunter2", "hunt\u00e9r").encode("latin-1"))
    offset = path.read_bytes().index(b"\xe9")
    for args in (["run", "--config", str(path)], ["status", "--config", str(path)],
                 ["signal", "--config", str(path), "pause-snapshot"]):
        result = run_cli(*args)
        assert result.returncode == 2
        assert result.stderr.splitlines() == [
            f"error: {path}: not UTF-8 text (byte 0xe9 at offset {offset}); save the file as UTF-8"]


def test_missing_file_exits_2(tmp_path: Path) -> None:
    result = run_cli("status", "--config", str(tmp_path / "nope.json"))
    assert result.returncode == 2 and "cannot read" in result.stderr


@pytest.mark.parametrize("args", [[], ["run"], ["bogus"], ["signal", "--config", "x.json"]])
def test_bad_arguments_exit_2(args: list[str]) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["signal", "--config", "x",
                                   "execute-snapshot", "--help"], ["status", "--help"]])
def test_help_explains(args: list[str]) -> None:
    result = run_cli(*args)
    assert result.returncode == 0 and "usage: gtidmark" in result.stdout


@pytest.mark.parametrize(("variables", "flavour"), [
    ({"gtid_binlog_pos": "0-1-5"}, "mariadb"), ({"GTID_BINLOG_POS": ""}, "mariadb"),
    ({}, "mysql"),
])
def test_flavour_comes_from_the_server_not_the_class_name(
        variables: dict[str, str], flavour: Any) -> None:
    config = cfg(**{"connector.class": "com.example.AnyName"})
    assert flavour_of_server(variables).name == flavour
    assert config.with_server_flavour(flavour_of_server(variables).name).flavour == flavour


def test_rest_port_in_use_exits_2(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        path = tmp_path / "connector.json"
        path.write_text(json.dumps(doc(rest__port=str(port))))
        result = run_cli("run", "--config", str(path))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"rest.port: cannot listen on 127.0.0.1:{port}" in lines[0]


SHAPE = ('a connector file is {"name": ..., "config": {...}}, as Kafka Connect\'s POST '
         '/connectors takes, or the config map alone with its own "name" key, as GET '
         '/connectors/{name}/config gives it')


def test_a_file_without_the_wrapper_is_told_the_shape(tmp_path: Path) -> None:
    path = tmp_path / "connector.json"
    path.write_text(json.dumps(BASE))
    result = run_cli("run", "--config", str(path))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"error: {path}: name: required: {SHAPE}"]


def test_the_config_map_alone_with_its_name_is_accepted(caplog: pytest.LogCaptureFixture) -> None:
    """GET /connectors/{name}/config's answer (name inside) runs as it is."""
    with caplog.at_level(logging.WARNING):
        bare = parse_config({**BASE, "name": "shop-connector"})
        wrapped = parse_config({"name": "shop-connector",
                                "config": {**BASE, "name": "shop-connector"}})
    assert bare == wrapped == parse_config(doc())
    assert caplog.records == []  # "name" inside the map is no unknown key
    with pytest.raises(ConfigError, match="its name 'other' is not the connector's name 'shop"):
        parse_config({"name": "shop-connector", "config": {**BASE, "name": "other"}})


@pytest.mark.parametrize("key", ["value.converter", "key.converter"])
def test_an_unknown_converter_is_refused_at_load(tmp_path: Path, key: str) -> None:
    """Before the Kafka and database checks of a start, not after them."""
    path = tmp_path / "connector.json"
    path.write_text(json.dumps(doc(**{key: "io.apicurio.registry.utils.converter.AvroConverter"})))
    result = run_cli("run", "--config", str(path))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [(
        f"error: {path}: {key}: unsupported converter class (accepted: "
        "org.apache.kafka.connect.json.JsonConverter, io.confluent.connect.avro.AvroConverter) "
        "(got 'io.apicurio.registry.utils.converter.AvroConverter')")]
    avro = cfg(**{key: "io.confluent.connect.avro.AvroConverter"})
    assert getattr(avro, key.replace(".", "_")) == "io.confluent.connect.avro.AvroConverter"
