"""The README's dashboard screenshot, with real data: a connector under load, scraped by
Debian's Prometheus, its dashboard's queries rendered to HTML and taken as a PNG by
Debian's headless Chromium (Grafana is not in Debian; the same dashboard loads in it).

    .venv/bin/python bench/dashboard_shot.py [--minutes 4] [--out docker/monitoring/...png]

Private MariaDB primary + replica and broker under a temporary directory, stopped after.
The workload: streaming writes at a rate that rises and falls, writes to a table the
include list leaves out, an incremental snapshot of 150,000 rows (paused for a while), and
one binlog disconnect near the end. Needs `prometheus` (make setup) and `chromium`.
"""

from __future__ import annotations

import argparse
import math
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.dashboard import MONITORING, Series, Window, datasource_scrape_s, load, panel_series
from bench.dashboard_html import page
from tests.integration.test_rest import reader_child, wait_ready
from tests.integration.test_rest_metrics import kill_binlog_dump
from tests.kafka_services import Broker
from tests.prometheus_tools import running_prometheus
from tests.rest_tools import RestClient, rest_connector
from tests.services import MariaDbPair

DB = "shop"
SNAPSHOT_ROWS = 150_000
CHUNK = 1024
PNG = MONITORING / "gtidmark-dashboard.png"


@contextmanager
def private_services() -> Iterator[tuple[MariaDbPair, Broker]]:
    base = Path(tempfile.mkdtemp(prefix="gmd"))  # short: a unix socket path is < ~100 bytes
    pair, broker = MariaDbPair.create(base), Broker(base)
    try:
        pair.start()
        broker.start()
        yield pair, broker
    finally:
        broker.stop()
        pair.stop()
        shutil.rmtree(base, ignore_errors=True)


def prepare(pair: MariaDbPair) -> None:
    pair.primary.execute(f"CREATE DATABASE {DB}")
    pair.primary.execute(f"CREATE TABLE {DB}.orders (id INT PRIMARY KEY, qty INT, "
                         "note VARCHAR(40))")
    pair.primary.execute(f"CREATE TABLE {DB}.audit (id INT AUTO_INCREMENT PRIMARY KEY, "
                         "what VARCHAR(40))")
    conn = pair.primary.root()
    with conn.cursor() as cur:
        for first in range(1, SNAPSHOT_ROWS + 1, 5000):
            cur.executemany(f"INSERT INTO {DB}.orders VALUES (%s, %s, %s)",
                            [(i, i % 7, f"order {i}") for i in range(first, first + 5000)])
    conn.close()


def write(pair: MariaDbPair, stop: threading.Event) -> None:
    """Transactions of 1-3 row changes at 20-220 per second (a two-minute wave), and an
    audit row (filtered) every tenth."""
    conn = pair.primary.root()
    started, n = time.monotonic(), 0
    with conn.cursor() as cur:
        while not stop.is_set():
            elapsed = time.monotonic() - started
            rate = 120 + 100 * math.sin(elapsed / 120 * 2 * math.pi)
            n += 1
            key = SNAPSHOT_ROWS + n
            cur.execute("BEGIN")
            cur.execute(f"INSERT INTO {DB}.orders VALUES (%s, 1, 'new')", (key,))
            cur.execute(f"UPDATE {DB}.orders SET qty = qty + 1 WHERE id = %s",
                        (random.randint(1, key),))
            if n % 10 == 0:
                cur.execute(f"INSERT INTO {DB}.audit (what) VALUES ('order %s')", (key,))
            cur.execute("COMMIT")
            time.sleep(1 / rate)
    conn.close()


def signal(client: RestClient, name: str, kind: str, tables: list[str]) -> None:
    data = {"data-collections": tables, "type": "incremental"} if kind == "execute-snapshot" else {}
    reply = client.call("POST", f"/connectors/{name}/signals", {"type": kind, "data": data})
    assert reply.status == 202, reply


def run(minutes: float, out: Path, html_path: Path, chromium: str) -> None:
    dashboard = load()
    scrape_s = datasource_scrape_s()
    with private_services() as (pair, broker):
        prepare(pair)
        workdir = Path(tempfile.mkdtemp(prefix="gmd-run"))
        # Chunks paced so that the snapshot takes about 40% of the run.
        delay_ms = int(minutes * 60_000 * 0.4 / (SNAPSHOT_ROWS / CHUNK))
        conn, client, doc = rest_connector(
            pair, broker, DB, workdir, table__include__list=f"{DB}.orders",
            incremental__snapshot__chunk__size=str(CHUNK),
            incremental__snapshot__chunk__delay__ms=str(delay_ms))
        conn.start()
        try:
            wait_ready(client)
            target = f"127.0.0.1:{doc['config']['rest.port']}"
            with running_prometheus(target, workdir / "prometheus", f"{scrape_s:g}s") as prom:
                stop = threading.Event()
                writer = threading.Thread(target=write, args=(pair, stop), daemon=True)
                start = time.time()
                writer.start()
                # The script of the run, at fractions of its length.
                steps = [(0.2, "execute-snapshot"), (0.35, "pause-snapshot"),
                         (0.5, "resume-snapshot"), (0.8, "disconnect")]
                for at, what in steps:
                    time.sleep(max(0.0, start + at * minutes * 60 - time.time()))
                    print(f"{time.time() - start:5.0f}s {what}", flush=True)
                    if what == "disconnect":
                        assert conn.proc is not None
                        kill_binlog_dump(pair, reader_child(conn.proc.pid))
                    else:
                        signal(client, doc["name"], what, [f"{DB}.orders"])
                time.sleep(max(0.0, start + minutes * 60 - time.time()))
                window = Window(start, time.time(), scrape_s)
                data = {panel["id"]: [s for series in panel_series(prom, dashboard, panel,
                                                                   window).values()
                                      for s in series]
                        for panel in dashboard["panels"]}
                stop.set()
                writer.join(30)
        finally:
            conn.ensure_stopped()
            shutil.rmtree(workdir, ignore_errors=True)
    shoot(render(dashboard, data, window), out, html_path, chromium)


def render(dashboard: dict[str, Any], data: dict[int, list[Series]], window: Window) -> str:
    note = ("rendered from the dashboard's own queries against Prometheus "
            "(bench/dashboard_shot.py); Grafana draws the same dashboard")
    return page(dashboard, data, window, note)


def shoot(text: str, out: Path, html_path: Path, chromium: str) -> None:
    html_path.write_text(text, encoding="utf-8")
    height = int(text.split('<body style="height:', 1)[1].split("px", 1)[0])
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--screenshot={out.resolve()}", f"--window-size=1600,{height}",
                    html_path.resolve().as_uri()], check=True, capture_output=True, timeout=120)
    print(f"{out}: {out.stat().st_size // 1024} KB (page {html_path})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=4.0, help="length of the workload")
    parser.add_argument("--out", type=Path, default=PNG, help="the PNG to write")
    parser.add_argument("--html", type=Path, default=Path(tempfile.gettempdir()) /
                        "gtidmark-dashboard.html", help="the HTML page to write")
    parser.add_argument("--chromium", default="chromium", help="the browser to take it with")
    args = parser.parse_args()
    run(args.minutes, args.out, args.html, args.chromium)


if __name__ == "__main__":
    main()
