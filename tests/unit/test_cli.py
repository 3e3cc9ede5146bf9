"""The command line a new user meets: --version, --log-level anywhere, help with ranges
(#24)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASE: dict[str, Any] = {"database.hostname": "127.0.0.1", "database.user": "cdc",
                        "database.server.id": "5400", "topic.prefix": "shop",
                        "bootstrap.servers": "127.0.0.1:9"}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "connector.cli", *args], capture_output=True,
                          text=True, timeout=60, check=False)


def test_version_is_pyprojects() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout == f"gtidmark {version}\n"


@pytest.mark.parametrize("args", [
    ["run", "--log-level", "debug", "--config", "nope.json"],
    ["--log-level", "DEBUG", "run", "--config", "nope.json"],
    ["status", "--config", "nope.json", "--log-level", "Warning"],
    ["signal", "--config", "nope.json", "pause-snapshot", "--log-level", "error"],
])
def test_log_level_goes_before_or_after_the_subcommand(args: list[str]) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    assert result.stderr.splitlines() == ["error: nope.json: cannot read (No such file or directory)"]


def test_log_level_after_the_subcommand_is_the_one_used(tmp_path: Path) -> None:
    """Connection failures past the first are DEBUG lines: shown at debug, hidden at info."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        path = tmp_path / "connector.json"
        path.write_text(json.dumps({"name": "shop", "config": {
            **BASE, "bootstrap.servers": f"127.0.0.1:{closed.getsockname()[1]}",
            "consumer.socket.timeout.ms": "1500"}}))
        debug = run_cli("status", "--config", str(path), "--log-level", "debug")
        info = run_cli("--log-level", "debug", "status", "--config", str(path), "--log-level",
                       "info")
    assert debug.returncode == info.returncode == 1
    assert " DEBUG gtidmark.kafka: FAIL " in debug.stderr
    assert " DEBUG " not in info.stderr


def test_set_throttle_help_gives_ranges_and_defaults() -> None:
    result = run_cli("signal", "--config", "x.json", "set-throttle", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "--chunk-size ROWS rows per chunk SELECT, 1 to 100,000 (default: unchanged; a " \
           "connector starts with incremental.snapshot.chunk.size, 1024 unless set)" in text
    assert "--chunk-delay-ms MS pause between chunks in milliseconds, 0 to 60,000 (default: " \
           "unchanged; a connector starts with incremental.snapshot.chunk.delay.ms, 0 unless " \
           "set)" in text


def test_run_names_an_unreachable_database_and_kafka_at_once(tmp_path: Path) -> None:
    """Both checked in parallel before the lease's wait on Kafka: no 30 s, no pymysql tuple."""
    with socket.socket() as db_closed, socket.socket() as kafka_closed:
        db_closed.bind(("127.0.0.1", 0))
        kafka_closed.bind(("127.0.0.1", 0))
        db_port, kafka_port = db_closed.getsockname()[1], kafka_closed.getsockname()[1]
        path = tmp_path / "connector.json"
        path.write_text(json.dumps({"name": "shop", "config": {
            **BASE, "database.port": str(db_port), "database.password": "pw",
            "bootstrap.servers": f"127.0.0.1:{kafka_port}",
            "consumer.socket.timeout.ms": "2000"}}))  # ha.enabled: true by default
        result = run_cli("run", "--config", str(path))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        (f"error: cannot reach the database at 127.0.0.1:{db_port} (database.hostname, "
         "database.port): connection refused"),
        (f"error: cannot reach Kafka at 127.0.0.1:{kafka_port} (bootstrap.servers): "
         "connection refused")]


@pytest.mark.parametrize("flag", ["--kafka-config", "--catalog-config"])
def test_spark_apply_settings_file_not_utf8_is_one_line_and_exit_2(tmp_path: Path,
                                                                  flag: str) -> None:
    """A Latin-1 secret (0xe9) was a UnicodeDecodeError traceback and exit 1."""
    path = tmp_path / "settings.properties"
    path.write_bytes("sasl.password=s\u00e9cret\n".encode("latin-1"))
    result = run_cli("spark-apply", "--once", "--topic-pattern", r"shop\..+",
                     "--bootstrap-servers", "127.0.0.1:9", "--warehouse", str(tmp_path / "wh"),
                     flag, str(path))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {flag}: {path} is not UTF-8 text (byte 0xe9 at offset 15); save it as UTF-8"]
