"""The --maintain-* arguments of the Spark job: when it maintains its tables, what it keeps.

Apart from the job's options so the schedule and its checks live next to nothing else; a
bad value raises `ScheduleError`, which the job's options report as a usage error.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

ORPHAN_AGE_MIN_HOURS = 24.0  # Iceberg's remove_orphan_files refuses anything younger


class ScheduleError(ValueError):
    """A bad --maintain-* value: one line naming the argument."""


@dataclass(frozen=True)
class MaintenanceOptions:
    """Maintenance every `every` batches and/or `interval` minutes (0: not by that)."""

    every: int = 0
    interval: float = 0.0
    snapshot_hours: float = 1.0  # snapshots younger than this survive expiry
    orphan_hours: float = ORPHAN_AGE_MIN_HOURS  # files younger than this are never orphans

    @property
    def enabled(self) -> bool:
        return self.every > 0 or self.interval > 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--maintain-every", type=int, default=0, metavar="N",
                   help="maintain the tables (compaction, delete files, snapshot expiry, "
                   "orphan files) after every N batches; 0 = not by count (default)")
    p.add_argument("--maintain-interval", type=float, default=0.0, metavar="MINUTES",
                   help="maintain the tables after a batch once MINUTES have passed since "
                   "the last maintenance; 0 = not by time (default)")
    p.add_argument("--maintain-keep-snapshots", type=float, default=1.0, metavar="HOURS",
                   help="maintenance expires snapshots older than HOURS (default 1), always "
                   "keeping the newest one that carries the job's offsets")
    p.add_argument("--maintain-orphan-age", type=float, default=ORPHAN_AGE_MIN_HOURS,
                   metavar="HOURS", help="maintenance deletes files no snapshot references "
                   "once older than HOURS (default and minimum 24: a younger file may belong "
                   "to a commit in progress)")


def from_args(args: argparse.Namespace) -> MaintenanceOptions:
    """The validated schedule; ScheduleError (one line) for a bad value."""
    if args.maintain_every < 0:
        raise ScheduleError("--maintain-every: must be >= 0 batches")
    if args.maintain_interval < 0:
        raise ScheduleError("--maintain-interval: must be >= 0 minutes")
    if args.maintain_keep_snapshots < 0:
        raise ScheduleError("--maintain-keep-snapshots: must be >= 0 hours")
    if args.maintain_orphan_age < ORPHAN_AGE_MIN_HOURS:
        raise ScheduleError(f"--maintain-orphan-age: must be >= {ORPHAN_AGE_MIN_HOURS:g} hours "
                            f"(a younger unreferenced file may be a commit in progress)")
    return MaintenanceOptions(args.maintain_every, args.maintain_interval,
                              args.maintain_keep_snapshots, args.maintain_orphan_age)
