"""Debian's `prometheus` binary scraping a running connector, as the docker/ `monitoring`
profile's Prometheus does (its prometheus.yml with the target and interval replaced)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from bench.dashboard import MONITORING
from tests.services import free_port, wait_for


def prometheus_binary() -> str | None:
    """The binary `make setup` installs (Debian's package), or None."""
    return shutil.which("prometheus")


def scrape_config(target: str, interval: str) -> dict[str, Any]:
    """The profile's prometheus.yml scraping `target` (host:port) every `interval`."""
    config: dict[str, Any] = yaml.safe_load((MONITORING / "prometheus.yml").read_text())
    config["global"] = {"scrape_interval": interval, "evaluation_interval": interval}
    (job,) = config["scrape_configs"]
    job["static_configs"] = [{"targets": [target]}]
    return config


def query(base: str, expr: str) -> list[dict[str, Any]]:
    """An instant query's result vector."""
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': expr})}"
    with urllib.request.urlopen(url, timeout=30) as response:
        result: list[dict[str, Any]] = json.loads(response.read())["data"]["result"]
    return result


def scrapes(base: str) -> int:
    """Successful scrapes of the job in the last minute."""
    result = query(base, "sum_over_time(up[1m])")
    return int(float(result[0]["value"][1])) if result else 0


@contextmanager
def running_prometheus(target: str, workdir: Path, interval: str = "1s") -> Iterator[str]:
    """Prometheus on a free port, its data under `workdir`, scraping `target`; yields its
    base URL once ready and stops it (by PID) on the way out."""
    binary = prometheus_binary()
    assert binary is not None, "no prometheus binary (make setup installs Debian's)"
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    config.write_text(yaml.safe_dump(scrape_config(target, interval)))
    port = free_port()
    with open(workdir / "prometheus.log", "wb") as log:
        proc = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={workdir / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=log, stderr=subprocess.STDOUT, cwd=workdir, env=dict(os.environ))
    base = f"http://127.0.0.1:{port}"
    try:
        def ready() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"prometheus exited {proc.returncode}: "
                                     f"{(workdir / 'prometheus.log').read_text()[-2000:]}")
            with urllib.request.urlopen(f"{base}/-/ready", timeout=5) as response:
                return bool(response.status == 200)
        wait_for(ready, 30, "prometheus ready", interval=0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
