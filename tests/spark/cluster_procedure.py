"""The README's cluster procedure (section "On a Spark cluster"), read and run as written.

The block's `NAME=value` lines are the user's settings: a test gives its own values for
exactly those names; every other line runs verbatim in bash.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "### On a Spark cluster"
_SETTING = re.compile(r"([A-Z][A-Z0-9_]*)=")


@dataclass(frozen=True)
class Procedure:
    """The block split into the settings' names, the setup commands and spark-submit."""

    settings: tuple[str, ...]
    setup: tuple[str, ...]
    submit: str


def commands(block: str) -> list[str]:
    """Shell commands of `block`, a backslash-continued command kept as one."""
    out: list[str] = []
    pending: list[str] = []
    for line in block.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        pending.append(line)
        if not line.endswith("\\"):
            out.append("\n".join(pending))
            pending = []
    assert not pending, "a continued command runs to the end of the block"
    return out


def readme_procedure() -> Procedure:
    section = README.read_text(encoding="utf-8").split(SECTION, 1)[1]
    match = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert match is not None, f"no ```sh block under {SECTION!r} in the README"
    settings, setup, submits = [], [], []
    for command in commands(match.group(1)):
        setting = _SETTING.match(command)
        if setting:
            settings.append(setting.group(1))
        elif command.startswith("spark-submit "):
            submits.append(command)
        else:
            setup.append(command)
    assert len(submits) == 1, "the block has one spark-submit"
    return Procedure(tuple(settings), tuple(setup), submits[0])


def shell_env(values: dict[str, str]) -> dict[str, str]:
    """A user's shell: the project's virtualenv first on PATH, no PySpark or Python path
    variables of the test session, the loopback address for Spark, and the settings."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_HOME")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return {**env, **values}


def bash(command: str) -> list[str]:
    return ["bash", "-euo", "pipefail", "-c", command]


def run_setup(procedure: Procedure, cwd: Path, env: dict[str, str]) -> None:
    for command in procedure.setup:
        done = subprocess.run(bash(command), cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=300, check=False)
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"


def start_submit(procedure: Procedure, cwd: Path, env: dict[str, str],
                 log: Path) -> subprocess.Popen[bytes]:
    """spark-submit in its own process group (driver JVM and Python), output into `log`."""
    with open(log, "ab") as out:
        return subprocess.Popen(bash(procedure.submit), cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
