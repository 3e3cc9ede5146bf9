"""A standalone Spark cluster from pip's pyspark (a Master, two one-core Workers) for tests.

Started with `bin/spark-class` like a real one, its JVMs stopped by PID at the end; helpers
find a Worker's executor JVMs and the tasks their logs say are running.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import struct
import subprocess
import termios
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

from tests.services import ServiceError, free_port, wait_for

SPARK_HOME = Path(pyspark.__file__).resolve().parent
WORKERS = 2
DAEMON_MEMORY = "256m"  # Master and Worker JVM heaps
WORKER_MEMORY = "1g"  # what a Worker offers its executors
_RUNNING = re.compile(r"Executor: Running task .*\(TID (\d+)\)")
_ENDED = re.compile(r"Executor: (?:Finished task|Exception in task|.*killed task) .*\(TID (\d+)\)")
_OPTION = re.compile(r"--(executor-id|app-id)\s+(\S+)")


def cluster_env(conf_dir: Path) -> dict[str, str]:
    """A clean environment for the JVMs: no Python path of the project leaks to executors."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")}
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_CONF_DIR=str(conf_dir),
               SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY=DAEMON_MEMORY)
    return env


def children() -> dict[int, list[int]]:
    """Parent PID -> child PIDs of every process now."""
    out: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        out.setdefault(ppid, []).append(int(entry.name))
    return out


def descendants(pid: int) -> list[int]:
    tree, out, todo = children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


@dataclass
class Executor:
    """One executor JVM a Worker launched, and its log in the Worker's work directory."""

    pid: int
    app_id: str
    executor_id: str
    log: Path

    def running_tasks(self) -> set[str]:
        """Task ids its log shows started and not yet finished, failed or killed."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return set()
        return set(_RUNNING.findall(text)) - set(_ENDED.findall(text))

    def unread_output(self) -> int:
        """Bytes it wrote to its stderr pipe that the Worker has not copied to `log` yet."""
        fd = os.open(f"/proc/{self.pid}/fd/2", os.O_RDONLY | os.O_NONBLOCK)
        try:
            return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0])
        finally:
            os.close(fd)

    def python_workers(self) -> list[list[str]]:
        """Command lines of its PySpark daemon and workers (the executors' Python)."""
        return [line for line in map(cmdline, descendants(self.pid))
                if any("pyspark.daemon" in part for part in line)]


@dataclass
class StandaloneCluster:
    """`spark-class ...Master` and WORKERS `...Worker` processes under `base`."""

    base: Path
    port: int = field(default_factory=free_port)
    ui_port: int = field(default_factory=free_port)
    master: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _spark_class(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        conf = self.base / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        with open(self.base / f"{name}.log", "ab") as out:
            return subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args],
                                    stdout=out, stderr=subprocess.STDOUT, cwd=self.base,
                                    env=cluster_env(conf))

    def launch(self) -> None:
        """Start the JVMs (spark-class execs java: each Popen's PID is its JVM's)."""
        self.master = self._spark_class("master", [
            "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
            "--port", str(self.port), "--webui-port", str(self.ui_port)])
        for n in range(WORKERS):
            work = self.base / f"worker{n}"
            work.mkdir(parents=True, exist_ok=True)
            self.workers.append(self._spark_class(f"worker{n}", [
                "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                "--webui-port", str(free_port()), "--cores", "1", "--memory", WORKER_MEMORY,
                "--work-dir", str(work), self.url]))

    def _alive_workers(self) -> int:
        for proc in [self.master, *self.workers]:
            if proc is not None and proc.poll() is not None:
                raise ServiceError(f"a Spark JVM exited with {proc.returncode}; logs in "
                                   f"{self.base}")
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as r:
            state = json.load(r)
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def wait_ready(self, timeout: float = 90) -> None:
        """Until the Master lists every Worker as ALIVE."""
        wait_for(lambda: self._alive_workers() == WORKERS, timeout,
                 f"{WORKERS} Spark workers registered with the master", interval=0.2)

    def executors(self) -> list[Executor]:
        """The executor JVMs the Workers run now."""
        out = []
        for n, worker in enumerate(self.workers):
            for pid in children().get(worker.pid, []):
                options = dict(_OPTION.findall(" ".join(cmdline(pid))))
                if "executor-id" in options and "app-id" in options:
                    log = (self.base / f"worker{n}" / options["app-id"]
                           / options["executor-id"] / "stderr")
                    out.append(Executor(pid, options["app-id"], options["executor-id"], log))
        return out

    def stop(self) -> None:
        """SIGKILL what the Workers launched, then stop Workers and Master, all by PID."""
        for worker in self.workers:
            for pid in reversed(descendants(worker.pid)):
                _signal(pid, signal.SIGKILL)
        for proc in [*self.workers, self.master]:
            if proc is None or proc.poll() is not None:
                continue
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
