"""CPU seconds by process, and by thread of this process, from /proc: where a run's time goes.

On a shared 2-core machine wall-clock rates are noisy; the CPU each stage used (utime +
stime deltas) is what an A/B compares. A thread that ends during the run is not counted.
"""

from __future__ import annotations

import os
import threading

_TICK = os.sysconf("SC_CLK_TCK")


def _cpu(stat_path: str) -> float:
    with open(stat_path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


def _threads() -> dict[int, tuple[str, float]]:
    """This process's threads: native id -> (comm, CPU seconds)."""
    found = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                comm = f.read().strip()
            found[int(tid)] = (comm, _cpu(f"/proc/self/task/{tid}/stat"))
        except OSError:
            continue  # it ended meanwhile
    return found


def _children() -> dict[int, str]:
    """This process's child processes: pid -> the module a `python -m` child runs (the
    connector's binlog and chunk readers), else its comm."""
    found = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                pids = [int(p) for p in f.read().split()]
        except OSError:
            continue
        for pid in pids:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = f.read().decode(errors="replace").split("\0")
                with open(f"/proc/{pid}/comm") as f:
                    comm = f.read().strip()
            except OSError:
                continue
            found[pid] = argv[argv.index("-m") + 1] if "-m" in argv[:-1] else comm
    return found


class CpuSplit:
    """Counts from now: the given processes (name -> pid) and this process's threads, by
    their Python name (librdkafka's as "rdkafka", other native threads by their comm).
    `children` names this process's child processes (from their start if they start later)."""

    def __init__(self, processes: dict[str, int],
                 children: dict[str, str] | None = None) -> None:
        self._processes = processes
        self._start = {name: _cpu(f"/proc/{pid}/stat") for name, pid in processes.items()}
        self._threads = _threads()
        self._children = children or {}
        self._children_start = {pid: _cpu(f"/proc/{pid}/stat") for pid in _children()}

    def stop(self) -> dict[str, float]:
        """CPU seconds since the start, by name."""
        split = {name: _cpu(f"/proc/{pid}/stat") - self._start[name]
                 for name, pid in self._processes.items()}
        for pid, module in _children().items():
            if module in self._children:
                name = self._children[module]
                try:
                    used = _cpu(f"/proc/{pid}/stat") - self._children_start.get(pid, 0.0)
                except OSError:
                    continue
                split[name] = split.get(name, 0.0) + used
        names = {t.native_id: t.name for t in threading.enumerate()}
        for tid, (comm, cpu) in _threads().items():
            name = names.get(tid) or ("rdkafka" if comm.startswith("rdk:") else comm)
            split[name] = split.get(name, 0.0) + cpu - self._threads.get(tid, (comm, 0.0))[1]
        return split
