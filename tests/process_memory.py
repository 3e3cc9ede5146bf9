"""Peak resident memory of a process and its children (the connector and its readers)."""

from __future__ import annotations

from pathlib import Path


def process_tree(pid: int) -> list[int]:
    """`pid` and its descendants."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo.extend(children.get(p, []))
    return tree


def peaks_mb(pid: int) -> dict[int, float]:
    """The peak resident size (VmHWM) so far of `pid` and of each of its descendants."""
    peaks: dict[int, float] = {}
    for p in process_tree(pid):
        try:
            lines = Path(f"/proc/{p}/status").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith("VmHWM:"):
                peaks[p] = int(line.split()[1]) / 1024
    return peaks
