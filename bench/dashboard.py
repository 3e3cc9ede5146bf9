"""The gtidmark Grafana dashboard's panel queries, run against a Prometheus as Grafana runs them.

Grafana cannot be installed where the README's screenshot is made (not in Debian), so the
screenshot (bench/dashboard_shot.py) and the integration test that the dashboard renders
with data both query Prometheus' HTTP API with each target's expression, Grafana's
`$__interval`/`$__rate_interval`/`$__range` and the dashboard's template variables
substituted, over the panel's time range and step.
"""

from __future__ import annotations

import json
import math
import re
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

MONITORING = Path(__file__).resolve().parent.parent / "docker" / "monitoring"
DASHBOARD = MONITORING / "gtidmark-dashboard.json"
DATASOURCE = MONITORING / "grafana-datasource.yaml"
PAGE_WIDTH = 1600  # px: a panel of w columns asks for about w/24 of it in points
# Grafana's rounding of a raw interval (rangeutil.roundInterval), in ms, down to 1 s.
NICE_MS = (1000, 2000, 5000, 10_000, 15_000, 20_000, 30_000, 60_000, 120_000, 300_000,
           600_000, 900_000, 1_200_000, 1_800_000, 3_600_000)
VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)|\[\[(\w+)\]\]")
LEGEND = re.compile(r"\{\{\s*(\w+)\s*\}\}")


@dataclass(frozen=True)
class Series:
    """One series of a target's answer: its legend and (unix seconds, value) points."""

    legend: str
    points: list[tuple[float, float]]


@dataclass(frozen=True)
class Window:
    """The time range a panel is drawn over and Grafana's numbers for it."""

    start: float  # unix seconds
    end: float
    scrape_s: float  # the data source's `timeInterval` (Prometheus' scrape interval)

    def interval_ms(self, columns: int) -> int:
        """$__interval: the range over the panel's width in points, at least a scrape."""
        raw = (self.end - self.start) * 1000 / max(1, columns * PAGE_WIDTH // 24)
        nice = next((n for n in NICE_MS if n >= raw), NICE_MS[-1])
        return max(int(self.scrape_s * 1000), nice)

    def rate_interval_ms(self, columns: int) -> int:
        """$__rate_interval: Grafana's max($__interval + scrape, 4 * scrape)."""
        scrape = int(self.scrape_s * 1000)
        return max(self.interval_ms(columns) + scrape, 4 * scrape)


def load(path: Path = DASHBOARD) -> dict[str, Any]:
    dashboard: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return dashboard


def datasource_scrape_s(path: Path = DATASOURCE) -> float:
    """The provisioned data source's `timeInterval`, as Grafana reads it (default 15 s)."""
    (source,) = yaml.safe_load(path.read_text(encoding="utf-8"))["datasources"]
    return seconds(source.get("jsonData", {}).get("timeInterval", "15s"))


def seconds(duration: str) -> float:
    """A Prometheus/Grafana duration of one unit ('5s', '500ms', '1m') in seconds."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)", duration)
    if match is None:
        raise ValueError(f"not a duration: {duration!r}")
    unit = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]
    return float(match.group(1)) * unit


def duration(ms: int) -> str:
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def expression(expr: str, dashboard: dict[str, Any], window: Window, columns: int) -> str:
    """`expr` with Grafana's built-in and the dashboard's template variables substituted; a
    variable nobody defines is an error (Grafana would send it as is and Prometheus refuse)."""
    interval, rate = window.interval_ms(columns), window.rate_interval_ms(columns)
    range_ms = round((window.end - window.start) * 1000)
    values = {"__interval": duration(interval), "__interval_ms": str(interval),
              "__rate_interval": duration(rate), "__rate_interval_ms": str(rate),
              "__range": f"{round(range_ms / 1000)}s", "__range_s": str(round(range_ms / 1000)),
              "__range_ms": str(range_ms)}
    for variable in dashboard.get("templating", {}).get("list", []):
        current = variable.get("current", {}).get("value", variable.get("query", ""))
        # A multi-value variable becomes a regex alternation, as Grafana formats it for PromQL.
        values[variable["name"]] = ("(" + "|".join(current) + ")" if isinstance(current, list)
                                    else str(current))

    def value(match: re.Match[str]) -> str:
        name = next(group for group in match.groups() if group is not None)
        if name.isdigit():  # label_replace's "$1", not a variable
            return match.group(0)
        if name not in values:
            raise ValueError(f"{expr!r}: no variable {name!r}")
        return values[name]

    return VARIABLE.sub(value, expr)


def legend(legend_format: str, labels: dict[str, str]) -> str:
    """Grafana's legend: `{{label}}` replaced, or the series' selector when the format is empty."""
    if legend_format:
        return LEGEND.sub(lambda m: labels.get(m.group(1), ""), legend_format)
    name = labels.get("__name__", "")
    rest = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "__name__")
    return f"{name}{{{rest}}}"


def query_range(prometheus: str, expr: str, window: Window, step_ms: int) -> list[dict[str, Any]]:
    """Prometheus' /api/v1/query_range answer (the matrix) for `expr` over the window, the
    start and end aligned to the step as Grafana aligns them."""
    step = step_ms / 1000
    params = {"query": expr, "start": str(math.floor(window.start / step) * step),
              "end": str(math.floor(window.end / step) * step), "step": str(step)}
    url = f"{prometheus}/api/v1/query_range?{urllib.parse.urlencode(params)}"
    with urllib.request.urlopen(url, timeout=30) as response:
        answer = json.loads(response.read())
    if answer["status"] != "success":
        raise RuntimeError(f"{expr!r}: {answer}")
    result: list[dict[str, Any]] = answer["data"]["result"]
    return result


def panel_series(prometheus: str, dashboard: dict[str, Any], panel: dict[str, Any],
                 window: Window) -> dict[str, list[Series]]:
    """Each target's series (by refId), its query as Grafana would send it."""
    columns = int(panel["gridPos"]["w"])
    out = {}
    for target in panel["targets"]:
        expr = expression(target["expr"], dashboard, window, columns)
        matrix = query_range(prometheus, expr, window, window.interval_ms(columns))
        out[target["refId"]] = [
            Series(legend(target.get("legendFormat", ""), item["metric"]),
                   [(float(t), float(v)) for t, v in item["values"]])
            for item in matrix]
    return out
