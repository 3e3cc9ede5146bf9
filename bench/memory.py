"""Peak memory of `gtidmark run` while it streams a 1 GB transaction and snapshots 1M rows.

Run per flavour (`--flavour mariadb|mysql|both`, or BENCH_FLAVOUR; default both). The
connector runs as its own process, as users run it; its binlog reader is a child process.
Each case starts a fresh connector, warms it up with a small transaction (topic, encoder,
producer buffers), then reads the peak resident size (VmHWM) of both processes before and
after the case, once every record is in Kafka and the offsets cover the primary:
1. one transaction of ~1 GB of 1 KB rows (1,000,000 rows),
2. one transaction of ~1 GB of 256 KB rows (4,000 rows: a queue bounded in rows only
   would hold gigabytes),
3. an incremental snapshot of a 1,000,000-row table,
4. an incremental snapshot of ~1 GB of 256 KB rows.
BENCH_SCALE scales every size (0.1 while developing).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import Services, flavours_wanted, print_table, scaled, services, synced
from connector.settings.parse import parse_config
from signals.send import build_signal, send_signal
from tests.connector_tools import ConnectorProcess, connector_document
from tests.kafka_tools import high_watermark
from tests.process_memory import peaks_mb
from tests.workload import insert_sequence

NARROW_ROWS, NARROW_WIDTH = scaled(1_000_000), 1_000
WIDE_ROWS, WIDE_WIDTH = scaled(4_000), 256 * 1024
SNAPSHOT_ROWS = scaled(1_000_000)
MB = 1024 * 1024


def wait(predicate: Callable[[], bool], timeout: float, what: str,
         proc: ConnectorProcess) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.proc is not None
        if proc.proc.poll() is not None:
            raise RuntimeError(f"connector exited {proc.proc.returncode} waiting for {what}: "
                               f"{proc.log()[-2000:]}")
        if predicate():
            return
        time.sleep(0.5)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")


def make_table(svc: Services, db: str, width: int) -> None:
    svc.pair.primary.execute(f"CREATE DATABASE {db}")
    column = "LONGTEXT" if width > 60_000 else f"VARCHAR({width})"
    svc.pair.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, s {column})")


def fill(svc: Services, db: str, rows: int, width: int, first: int = 1) -> None:
    """`rows` rows of `width` bytes in one transaction on the primary."""
    insert_sequence(svc.pair, db, "t", rows, f"seq, REPEAT(CHAR(65 + seq % 26), {width})",
                    first=first)


def one_case(svc: Services, workdir: Path, db: str, rows: int, width: int,
             snapshot: bool) -> dict[str, Any]:
    """Peak RSS growth of the connector's processes over one case."""
    make_table(svc, db, width)
    if snapshot:
        fill(svc, db, rows, width, first=100)
    synced(svc)
    doc = connector_document(svc.pair, svc.broker, db)
    (workdir / db).mkdir()
    proc = ConnectorProcess(doc, workdir / db)
    proc.start()
    topic = f"{db}.{db}.t"
    try:
        proc.wait_log("binlog stream open", 120)
        fill(svc, db, 10, width)  # warm-up
        wait(lambda: high_watermark(svc.broker.bootstrap, topic) >= 10, 120, "the warm-up", proc)
        assert proc.proc is not None
        before = peaks_mb(proc.proc.pid)
        began = time.monotonic()
        if snapshot:
            send_signal(parse_config(doc), build_signal("execute-snapshot", tables=[f"{db}.t"]))
        else:
            fill(svc, db, rows, width, first=100)
        wait(lambda: high_watermark(svc.broker.bootstrap, topic) >= rows + 10, 3600,
             f"{rows:,} records in {topic}", proc)
        seconds = time.monotonic() - began
        after = peaks_mb(proc.proc.pid)
    finally:
        proc.ensure_stopped()
    parent = proc.proc.pid
    reader = [p for p in after if p != parent]
    return {"rows": rows, "mb": rows * width / MB, "seconds": seconds,
            "parent_before": before.get(parent, 0.0), "parent_peak": after.get(parent, 0.0),
            "reader_peak": max((after[p] for p in reader), default=0.0)}


def run(flavour: str) -> None:
    rows: list[list[Any]] = []
    with services(flavour) as svc, tempfile.TemporaryDirectory(prefix="gmm") as tmp:
        cases = [("stream 1 KB rows, one tx", "memnarrow", NARROW_ROWS, NARROW_WIDTH, False),
                 ("stream 256 KB rows, one tx", "memwide", WIDE_ROWS, WIDE_WIDTH, False),
                 ("snapshot 100-byte rows", "memsnap", SNAPSHOT_ROWS, 100, True),
                 ("snapshot 256 KB rows", "memsnapwide", WIDE_ROWS, WIDE_WIDTH, True)]
        for label, db, count, width, snapshot in cases:
            r = one_case(svc, Path(tmp), db, count, width, snapshot)
            rows.append([svc.label(label), r["rows"], r["mb"], r["seconds"], r["parent_before"],
                         r["parent_peak"], r["reader_peak"]])
            print(f"  {label}: {r}", flush=True)
    print_table(f"Peak RSS of gtidmark run [{flavour}]",
                ["case", "rows", "MB", "s", "parent MB before", "parent peak MB",
                 "reader peak MB"], rows)


def main(argv: list[str] | None = None) -> int:
    for flavour in flavours_wanted(__doc__, argv):
        run(flavour)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
