"""docker/: the connector's entrypoint, its /ready healthcheck and the replica's replication
healthcheck, each run for real (the wrapper around a fake command, the probe against a real
RestServer, the replica check's pipeline on real SHOW REPLICA STATUS output)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from connector.control import EngineControl, EngineView
from connector.rest.server import RestServer
from tests.services import ServerProcess, wait_for
from tests.unit.test_docker_files import DOCKER, REPO, STACKS, compose, mounted_config

ENTRYPOINT = DOCKER / "entrypoint.sh"
FAKE_GTIDMARK = """#!/bin/sh
trap 'echo "stopped by TERM" >&2; exit 0' TERM
echo "fake gtidmark $*" >&2
if [ "$1" = wait ]; then echo started > "$2"; while :; do sleep 0.05; done; fi
exit "$1"
"""


def wrapper(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    fake = tmp_path / "fake-gtidmark"
    fake.write_text(FAKE_GTIDMARK)
    fake.chmod(0o755)
    env = {**os.environ, "GTIDMARK_COMMAND": str(fake)}
    return subprocess.Popen(["sh", str(ENTRYPOINT), *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.parametrize("code", [0, 1, 3])
def test_the_entrypoint_passes_every_exit_but_2_through_so_on_failure_restarts_them(
        tmp_path: Path, code: int) -> None:
    proc = wrapper(tmp_path, str(code))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code
    assert err.splitlines() == [f"fake gtidmark {code}"]


def test_the_entrypoint_turns_exit_2_into_a_stop_with_one_line(tmp_path: Path) -> None:
    proc = wrapper(tmp_path, "2")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, "exit 0: restart: on-failure leaves the container stopped"
    lines = err.splitlines()
    assert lines[0] == "fake gtidmark 2" and len(lines) == 2
    assert lines[1].startswith("gtidmark refused to start (exit 2): not restarting")


def test_a_config_gtidmark_refuses_leaves_its_line_and_a_stopped_container(
        tmp_path: Path) -> None:
    """The real `gtidmark run` on a config with a bad value: its one line, then the wrapper's."""
    config = tmp_path / "connector.json"
    config.write_text(json.dumps({"name": "shop", "config": {
        "database.hostname": "replica", "database.user": "cdc", "database.server.id": "5400",
        "topic.prefix": "shop", "bootstrap.servers": "kafka:9092", "snapshot.mode": "sometimes"}}))
    env = {**os.environ, "GTIDMARK_COMMAND": str(Path(sys.executable).with_name("gtidmark"))}
    done = subprocess.run(["sh", str(ENTRYPOINT), "run", "--config", str(config)], env=env,
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    first, second = done.stderr.splitlines()
    assert "snapshot.mode" in first and "sometimes" in first
    assert second.startswith("gtidmark refused to start (exit 2): not restarting")


def test_the_entrypoint_passes_sigterm_on_and_exits_with_the_commands_status(
        tmp_path: Path) -> None:
    started = tmp_path / "started"
    proc = wrapper(tmp_path, "wait", str(started))
    wait_for(started.exists, 60, "the fake command to start")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "stopped by TERM" in err


# Ends the moment it has sent the wrapper SIGTERM, once the wrapper sleeps in `wait`.
RACING_GTIDMARK = """#!/bin/sh
trap 'exit 0' TERM
until read -r _ _ state _ < "/proc/$PPID/stat" && [ "$state" = S ]; do :; done
kill -TERM "$PPID"
exit 0
"""


def test_the_entrypoint_exits_0_when_the_command_ends_as_sigterm_arrives(
        tmp_path: Path) -> None:
    """dash cuts `wait` short for the trap (128+15) even when it has just reaped the command:
    the wrapper took that for the command's status and exited 143 (in 32-45 runs of 300)."""
    codes = racing_runs(tmp_path, "sh", 300)
    assert {code: codes.count(code) for code in codes} == {0: 300}


def test_under_bash_the_entrypoint_exits_0_or_with_the_signal_when_the_command_ends_as_sigterm_arrives(
        tmp_path: Path) -> None:
    """bash 5.2 answers the second `wait` with -1 (the wrapper exited 255 in 48 runs of 150);
    it keeps no status to give, so the signal's 143 is the best it can say."""
    codes = racing_runs(tmp_path, "bash", 150)
    assert set(codes) <= {0, 143}


def racing_runs(tmp_path: Path, shell: str, runs: int) -> list[int]:
    """The wrapper's exit codes, run under `shell`, around a command that ends as it signals."""
    fake = tmp_path / "racing-gtidmark"
    fake.write_text(RACING_GTIDMARK)
    fake.chmod(0o755)
    env = {**os.environ, "GTIDMARK_COMMAND": str(fake)}
    return [subprocess.run([shell, str(ENTRYPOINT)], env=env, check=False, timeout=60,
                           capture_output=True).returncode for _ in range(runs)]


@pytest.mark.parametrize("name", sorted(STACKS))
def test_every_stack_runs_the_entrypoint_and_stops_on_exit_2_under_on_failure(name: str) -> None:
    dockerfile = (DOCKER / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^COPY (--chmod=755 )?docker/entrypoint.sh /usr/local/bin/"
                     r"gtidmark-entrypoint$", dockerfile, re.MULTILINE)
    assert 'ENTRYPOINT ["gtidmark-entrypoint"]' in dockerfile
    connector = compose(name)["services"]["connector"]
    assert "entrypoint" not in connector and connector["restart"] == "on-failure"
    assert os.access(ENTRYPOINT, os.X_OK)


def test_the_image_installs_the_avro_extra() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    dockerfile = (DOCKER / "Dockerfile").read_text(encoding="utf-8")
    installed = re.findall(r"pip install \"?\.\[([\w,]+)\]\"?", dockerfile)
    assert installed == ["avro"] and "avro" in extras


def ready_probe(name: str) -> list[str]:
    """The connector's healthcheck command, as its container would run it."""
    test = compose(name)["services"]["connector"]["healthcheck"]["test"]
    assert test[0] == "CMD" and test[1] == "python"
    return [sys.executable, *test[2:]]


@contextmanager
def serving(name: str) -> Iterator[tuple[RestServer, EngineControl]]:
    config = mounted_config(name).model_copy(update={"rest_host": "127.0.0.1", "rest_port": 0})
    control = EngineControl()
    server = RestServer(config, control)
    server.start()
    try:
        yield server, control
    finally:
        server.stop()


@pytest.mark.parametrize("name", sorted(STACKS))
def test_the_connector_healthcheck_is_the_ready_probe_on_the_configured_port(name: str) -> None:
    """Unhealthy until RUNNING and connected to the binlog, healthy then: /ready's answer."""
    config = mounted_config(name)
    assert config.rest_port == 8083 and config.rest_host == "0.0.0.0"
    probe = ready_probe(name)
    url = f"http://127.0.0.1:{config.rest_port}/ready"
    assert url in probe[-1]
    connector = compose(name)["services"]["connector"]
    assert f"127.0.0.1:{config.rest_port}:{config.rest_port}" in connector["ports"]
    with serving(name) as (server, control):
        probe[-1] = probe[-1].replace(url, f"http://127.0.0.1:{server.port}/ready")

        def healthy() -> bool:
            return subprocess.run(probe, check=False, capture_output=True, timeout=60).returncode == 0

        assert not healthy(), "healthy before the engine published a view"
        control.publish(EngineView(state="RUNNING", connected=False, queue_empty=True))
        assert not healthy(), "healthy while the binlog stream is not connected"
        control.publish(EngineView(state="RUNNING", connected=True, queue_empty=True))
        assert healthy()
    assert compose(name)["services"]["spark"]["depends_on"]["connector"]["condition"] == \
        "service_healthy"


def replica_status(server: ServerProcess, statement: str) -> str:
    """The statement's `\\G` output from the real client, over the server's socket."""
    done = subprocess.run(["mariadb", "--no-defaults", f"--socket={server.socket}", "-uroot",
                           "-e", statement], check=False, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("name", sorted(STACKS))
def test_the_replica_is_healthy_only_while_both_replication_threads_run(
        name: str, request: pytest.FixtureRequest) -> None:
    flavour = STACKS[name][1]
    test = compose(name)["services"]["replica"]["healthcheck"]["test"]
    assert test[0] == "CMD-SHELL"
    shell = test[1].replace("$$", "$")  # compose's escape for a literal $
    client, _, pipeline = shell.partition("|")
    words = shlex.split(client)
    assert words[:3] == [flavour, "-h", "127.0.0.1"], "TCP: answers only after the init scripts"
    statement = words[words.index("-e") + 1]
    pair = request.getfixturevalue(flavour)

    def healthy(status: str) -> bool:
        return subprocess.run(["sh", "-c", pipeline], check=False, input=status, text=True,
                              timeout=60).returncode == 0

    running = replica_status(pair.replica, statement)
    assert healthy(running)
    assert not healthy(replica_status(pair.primary, statement)), "a server not replicating"
    field = "Replica" if flavour == "mysql" else "Slave"
    for thread in ("IO", "SQL"):
        line = f"{field}_{thread}_Running: Yes"
        assert line in running
        assert not healthy(running.replace(line, f"{field}_{thread}_Running: No"))
    assert not healthy(running.replace("_Running: Yes", "_Running: Connecting"))
