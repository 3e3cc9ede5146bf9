"""`gtidmark signal ...` against the real broker: the right JSON lands, bad input exits 2/1."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import signals.send
from connector.cli import main
from connector.kafka.topics import TopicAdmin
from connector.offsets.store import OffsetStore
from connector.offsets.value import ConnectorOffsets
from connector.settings.parse import parse_config
from signals.models import ExecuteSnapshot, PauseSnapshot
from signals.send import build_signal, send_signal
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, create_topic, decode_json, list_topics
from tests.services import free_port

pytestmark = pytest.mark.integration


def _write_config(tmp_path: Path, prefix: str, bootstrap: str) -> Path:
    path = tmp_path / "connector.json"
    path.write_text(json.dumps({"name": f"{prefix}-connector", "config": {
        "database.hostname": "127.0.0.1", "database.user": "cdc", "database.server.id": 7,
        "topic.prefix": prefix, "bootstrap.servers": bootstrap}}))
    return path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "connector.cli", *args], capture_output=True,
                          text=True, timeout=60, check=False)


def test_execute_snapshot_puts_debezium_json_on_the_signal_topic(
        broker: Broker, unique_name: str, tmp_path: Path) -> None:
    cfg = _write_config(tmp_path, unique_name, broker.bootstrap)
    done = _cli("signal", "--config", str(cfg), "execute-snapshot",
                "--tables", "app.orders, app.items", "--condition", "app.orders=id < 1000",
                "--condition", "app.items=qty > 0 AND sku <> 'x=y'", "--surrogate-key", "sk")
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    match = re.fullmatch(rf"sent execute-snapshot \(id (\S+)\) to {unique_name}-signal "
                         r"at offset 0", line)
    assert match, line
    messages = consume_all(broker.bootstrap, f"{unique_name}-signal")
    assert len(messages) == 1
    assert messages[0].key() == unique_name.encode()
    assert messages[0].partition() == 0
    assert decode_json(messages[0].value()) == {
        "type": "execute-snapshot", "id": match.group(1),
        "data": {"data-collections": ["app.orders", "app.items"], "type": "incremental",
                 "additional-conditions": [
                     {"data-collection": "app.orders", "filter": "id < 1000"},
                     {"data-collection": "app.items", "filter": "qty > 0 AND sku <> 'x=y'"}],
                 "surrogate-key": "sk"}}


@pytest.mark.parametrize(("argv", "data"), [
    (["stop-snapshot"], {"data-collections": [], "type": "incremental"}),
    (["stop-snapshot", "--tables", "app.orders"],
     {"data-collections": ["app.orders"], "type": "incremental"}),
    (["pause-snapshot"], {}),
    (["resume-snapshot"], {}),
    (["set-throttle", "--chunk-size", "64"], {"chunk-size": 64}),
    (["set-throttle", "--chunk-delay-ms", "0"], {"chunk-delay-ms": 0}),
    (["log", "hello operator"], {"message": "hello operator"}),
], ids=["stop-all", "stop-one", "pause", "resume", "throttle-size", "throttle-delay", "log"])
def test_other_actions_send_their_json(broker: Broker, unique_name: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str], argv: list[str],
                                       data: dict[str, Any]) -> None:
    cfg = _write_config(tmp_path, unique_name, broker.bootstrap)
    assert main(["signal", "--config", str(cfg), *argv]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith(f"sent {argv[0]} (id ")
    [message] = consume_all(broker.bootstrap, f"{unique_name}-signal")
    value = decode_json(message.value())
    assert (value["type"], value["data"]) == (argv[0], data)
    assert out[0] == f"sent {argv[0]} (id {value['id']}) to {unique_name}-signal at offset 0"


BAD_ARGS: list[tuple[str, list[str], str]] = [
    ("no tables", ["execute-snapshot", "--tables", " , "], "--tables"),
    ("tables missing", ["execute-snapshot"], "--tables"),
    ("condition without equals", ["execute-snapshot", "--tables", "app.t", "--condition", "x"],
     "expected TABLE=FILTER"),
    ("condition for unlisted table",
     ["execute-snapshot", "--tables", "app.t", "--condition", "app.u=id < 3"],
     "'app.u' is not among data-collections"),
    ("condition with statement",
     ["execute-snapshot", "--tables", "app.t", "--condition", "app.t=1=1; DROP TABLE app.t"],
     "--condition #1: character ';' at position 3 is not allowed"),
    ("bad regex", ["execute-snapshot", "--tables", "app.(t"], "not a valid regular expression"),
    ("bad surrogate key", ["execute-snapshot", "--tables", "app.t", "--surrogate-key", "a b"],
     "--surrogate-key"),
    ("throttle nothing", ["set-throttle"], "give chunk-size and/or chunk-delay-ms"),
    ("throttle zero", ["set-throttle", "--chunk-size", "0"], "--chunk-size"),
    ("throttle negative delay", ["set-throttle", "--chunk-delay-ms", "-5"], "--chunk-delay-ms"),
    ("throttle not a number", ["set-throttle", "--chunk-size", "ten"], "--chunk-size"),
    ("empty log", ["log", ""], "MESSAGE"),
    ("unknown action", ["reboot"], "invalid choice"),
]


@pytest.mark.parametrize(("argv", "reason"), [b[1:] for b in BAD_ARGS],
                         ids=[b[0] for b in BAD_ARGS])
def test_bad_arguments_exit_2_with_one_line(broker: Broker, unique_name: str, tmp_path: Path,
                                           capfd: pytest.CaptureFixture[str], argv: list[str],
                                           reason: str) -> None:
    cfg = _write_config(tmp_path, unique_name, broker.bootstrap)
    assert main(["signal", "--config", str(cfg), *argv]) == 2
    out, err = capfd.readouterr()
    lines = err.strip().splitlines()
    assert out == ""
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert reason in lines[0]
    assert f"{unique_name}-signal" not in list_topics(broker.bootstrap)  # nothing was sent


def test_bad_arguments_exit_2_from_the_console_script(broker: Broker, unique_name: str,
                                                      tmp_path: Path) -> None:
    cfg = _write_config(tmp_path, unique_name, broker.bootstrap)
    done = _cli("signal", "--config", str(cfg), "set-throttle", "--chunk-size", "-1")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip() == ("error: signal set-throttle: --chunk-size: Input should be "
                                   "greater than 0")


def test_two_partition_signal_topic_exits_2_naming_the_key(
        broker: Broker, unique_name: str, tmp_path: Path,
        capfd: pytest.CaptureFixture[str]) -> None:
    cfg = _write_config(tmp_path, unique_name, broker.bootstrap)
    create_topic(broker.bootstrap, f"{unique_name}-signal", partitions=2)
    assert main(["signal", "--config", str(cfg), "pause-snapshot"]) == 2
    lines = capfd.readouterr().err.strip().splitlines()
    assert lines == [(f"error: signal.kafka.topic: {unique_name}-signal has 2 partitions; "
                     "the signal topic must have exactly one")]
    assert consume_all(broker.bootstrap, f"{unique_name}-signal") == []


def test_unreachable_broker_exits_1_with_one_line_in_bounded_time(
        unique_name: str, tmp_path: Path, capfd: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    bootstrap = f"127.0.0.1:{free_port()}"  # nothing listens there
    cfg = _write_config(tmp_path, unique_name, bootstrap)
    monkeypatch.setattr(signals.send, "SEND_TIMEOUT_S", 3.0)
    started = time.monotonic()
    assert main(["signal", "--config", str(cfg), "pause-snapshot"]) == 1
    assert time.monotonic() - started < 10
    out, err = capfd.readouterr()
    assert out == ""
    assert err.strip().splitlines() == [err.strip()]
    assert err.startswith(f"error: cannot reach Kafka at {bootstrap}")


def test_send_signal_returns_increasing_offsets(broker: Broker, unique_name: str) -> None:
    config = parse_config({"name": "c", "config": {
        "database.hostname": "h", "database.user": "u", "database.server.id": 1,
        "topic.prefix": unique_name, "bootstrap.servers": broker.bootstrap,
        "signal.kafka.topic": f"{unique_name}-custom-signals"}})
    first = build_signal("execute-snapshot", tables=["app.t"], signal_id="one")
    second = build_signal("pause-snapshot", signal_id="two")
    assert [send_signal(config, first), send_signal(config, second)] == [0, 1]
    messages = consume_all(broker.bootstrap, f"{unique_name}-custom-signals")
    assert [decode_json(m.value())["id"] for m in messages] == ["one", "two"]
    assert isinstance(first, ExecuteSnapshot) and isinstance(second, PauseSnapshot)


def test_a_signal_to_a_connector_that_never_committed_warns(
        broker: Broker, unique_name: str, tmp_path: Path,
        capfd: pytest.CaptureFixture[str]) -> None:
    """A first start reads signals from its launch on: one sent before any instance ran
    would be skipped, so the sender is told; once offsets are committed, not."""
    cfg = _write_config(tmp_path, unique_name, broker.bootstrap)
    assert main(["signal", "--config", str(cfg), "pause-snapshot"]) == 0
    err = capfd.readouterr().err.strip().splitlines()
    assert err == [(f"warning: no instance of connector {unique_name}-connector has committed "
                    f"offsets to {unique_name}-offsets yet: a first start acts on signals sent "
                    "after its `gtidmark run` was launched; one sent before is not acted on")]
    config = parse_config(json.loads(cfg.read_text()))
    store = OffsetStore(config)
    store.open(TopicAdmin(config.producer_settings()))
    store.seed(ConnectorOffsets(gtids="0-1-5", epoch=1))
    assert store.flush(30)
    assert main(["signal", "--config", str(cfg), "resume-snapshot"]) == 0
    assert capfd.readouterr().err == ""
