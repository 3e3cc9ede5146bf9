"""One self-contained HTML page of the dashboard's panels on Grafana's 24-column grid: time
series as inline SVG lines, stat panels as big numbers, in Grafana's dark theme colours."""

from __future__ import annotations

import html
import math
import time
from typing import Any

from bench.dashboard import PAGE_WIDTH, Series, Window

ROW_PX, GAP_PX = 30, 8  # Grafana's grid: a row is 30 px, panels 8 px apart
HEADER_PX = 48
# Grafana's classic palette, in the order it gives series.
PALETTE = ("#7EB26D", "#EAB839", "#6ED0E0", "#EF843C", "#E24D42", "#1F78C1", "#BA43A9",
           "#705DA0", "#508642", "#CCA300")
GREEN, RED = "#73BF69", "#F2495C"
# Grafana's thresholds when a panel sets none: green, red from 80.
DEFAULT_THRESHOLDS = [{"color": "green", "value": None}, {"color": "red", "value": 80}]
TIME_STEPS = (5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600)  # s between time labels
NAMED = {"green": GREEN, "red": RED, "orange": "#FF9830"}
STYLE = """
body { margin: 0; background: #111217; color: #ccccdc; font: 13px Inter, Helvetica, Arial,
       sans-serif; }
header { height: 40px; padding: 4px 16px; display: flex; align-items: center; gap: 16px; }
header h1 { font-size: 18px; font-weight: 500; margin: 0; color: #fff; }
header span { color: #8e8e9e; }
.panel { position: absolute; background: #181b1f; border: 1px solid #2c3235;
         border-radius: 2px; box-sizing: border-box; overflow: hidden; }
.title { height: 28px; line-height: 28px; padding: 0 8px; font-weight: 500; color: #fff; }
.stat { display: flex; flex-direction: column; align-items: center; justify-content: center;
        height: calc(100% - 28px); color: #fff; }
.stat .value { font-size: 34px; font-weight: 500; }
.stat .name { font-size: 13px; opacity: .85; }
svg text { fill: #8e8e9e; font: 11px Inter, Helvetica, Arial, sans-serif; }
"""


def number(value: float, unit: str) -> str:
    """`value` as Grafana's unit formats it (the simple units the dashboard uses)."""
    if math.isnan(value):
        return "NaN"
    if unit == "percentunit":
        return f"{value * 100:.1f}%"
    if unit == "bytes":
        for suffix in ("B", "KiB", "MiB", "GiB", "TiB"):
            if abs(value) < 1024 or suffix == "TiB":
                return f"{value:.0f} {suffix}" if suffix == "B" else f"{value:.1f} {suffix}"
            value /= 1024
    if unit == "ms" and abs(value) >= 1000:
        return number(value / 1000, "s")
    if unit == "s" and abs(value) >= 60:
        return f"{value / 60:.1f} min"
    text = short(value)
    return {"ms": f"{text} ms", "s": f"{text} s", "ops": f"{text} ops/s"}.get(unit, text)


def short(value: float) -> str:
    """Grafana's `short`: K, Mil, Bil above a thousand; at most three significant digits."""
    for limit, suffix in ((1e9, " Bil"), (1e6, " Mil"), (1e3, " K")):
        if abs(value) >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}" if value != int(value) else str(int(value))


def box(panel: dict[str, Any]) -> tuple[float, float, float, float]:
    """The panel's left, top, width and height in px from its gridPos."""
    grid = panel["gridPos"]
    column = (PAGE_WIDTH - GAP_PX) / 24
    return (GAP_PX + grid["x"] * column, HEADER_PX + grid["y"] * (ROW_PX + GAP_PX),
            grid["w"] * column - GAP_PX, grid["h"] * ROW_PX + (grid["h"] - 1) * GAP_PX)


def threshold_colour(panel: dict[str, Any], value: float) -> str:
    steps = panel["fieldConfig"]["defaults"].get("thresholds", {}).get("steps",
                                                                      DEFAULT_THRESHOLDS)
    colour = steps[0]["color"]
    for step in steps[1:]:
        if value >= step["value"]:
            colour = step["color"]
    return str(NAMED.get(colour, colour))


def stat(panel: dict[str, Any], series: list[Series]) -> str:
    """The last non-null value of each series, as the panel's textMode and colorMode say."""
    options, unit = panel["options"], panel["fieldConfig"]["defaults"].get("unit", "")
    cells = []
    for one in series:
        values = [v for _, v in one.points if not math.isnan(v)]
        if not values:
            continue
        value = values[-1]
        name = f'<div class="name">{html.escape(one.legend)}</div>'
        shown = {"name": f'<div class="value">{html.escape(one.legend)}</div>',
                 "value": f'<div class="value">{number(value, unit)}</div>'}
        text = shown.get(options.get("textMode", ""),
                         f'<div class="value">{number(value, unit)}</div>{name}')
        background = (threshold_colour(panel, value)
                      if options.get("colorMode") == "background" else "transparent")
        cells.append(f'<div class="stat" style="background:{background}">{text}</div>')
    return "".join(cells) or '<div class="stat">No data</div>'


def timeseries(panel: dict[str, Any], series: list[Series], window: Window,
               width: float, height: float) -> str:
    """Lines on a time axis over the window, a y axis in the panel's unit, a legend below."""
    unit = panel["fieldConfig"]["defaults"].get("unit", "")
    across = 3 if width > 700 else 2  # legend entries per line
    legend_rows = math.ceil(len(series) / across) or 1
    values = [v for s in series for _, v in s.points if not math.isnan(v)]
    levels = ticks(min([0.0, *values]), max([0.0, *values]))
    low, high = levels[0], levels[-1]
    labels = [number(v, unit) for v in levels]
    left, right, top = 12.0 + 6.5 * max(len(text) for text in labels), 12.0, 6.0
    bottom = 20.0 + 18 * legend_rows
    plot_w, plot_h = width - left - right, height - 28 - top - bottom
    span = window.end - window.start

    def x(t: float) -> float:
        return left + (t - window.start) / span * plot_w

    def y(v: float) -> float:
        return top + (high - v) / (high - low) * plot_h

    parts = []
    for v, text in zip(levels, labels, strict=True):  # horizontal grid lines, their values
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                     'stroke="#2c3235"/>')
        parts.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">'
                     f'{html.escape(text)}</text>')
    step = next((s for s in TIME_STEPS if span / s <= 7), TIME_STEPS[-1])
    shown = "%H:%M:%S" if step < 60 else "%H:%M"
    t = math.ceil(window.start / step) * step
    while t <= window.end:
        if left + 24 <= x(t) <= left + plot_w - 24:
            parts.append(f'<text x="{x(t):.1f}" y="{top + plot_h + 14:.1f}" '
                         f'text-anchor="middle">{time.strftime(shown, time.gmtime(t))}</text>')
        t += step
    gap = 2.5 * max(window.scrape_s, 1.0)
    for n, one in enumerate(series):
        colour = PALETTE[n % len(PALETTE)]
        for segment in segments(one.points, gap):
            path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in segment)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                         'stroke-width="1.5"/>')
        lx = left + (n % across) * (plot_w / across)
        ly = top + plot_h + 34 + 18 * (n // across)
        parts.append(f'<rect x="{lx:.1f}" y="{ly - 8:.1f}" width="14" height="4" '
                     f'fill="{colour}"/><text x="{lx + 20:.1f}" y="{ly:.1f}" '
                     f'style="fill:#ccccdc">{html.escape(one.legend)}</text>')
    if not values:
        parts.append(f'<text x="{left + plot_w / 2}" y="{top + plot_h / 2}" '
                     'text-anchor="middle">No data</text>')
    return (f'<svg width="{width:.0f}" height="{height - 28:.0f}" '
            f'xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>')


def ticks(low: float, high: float, count: int = 4) -> list[float]:
    """Round values from at most `low` to at least `high`, about `count` steps apart."""
    if high - low < 1e-12:
        high = low + 1
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.floor(low / step)
    return [(first + i) * step for i in range(math.ceil(high / step) - first + 1)]


def segments(points: list[tuple[float, float]], gap: float) -> list[list[tuple[float, float]]]:
    """The points as runs without NaN and without a gap longer than `gap` seconds."""
    out: list[list[tuple[float, float]]] = []
    last = -math.inf
    for t, v in points:
        if math.isnan(v):
            last = -math.inf
            continue
        if t - last > gap or not out:
            out.append([])
        out[-1].append((t, v))
        last = t
    return out


def page(dashboard: dict[str, Any], data: dict[int, list[Series]], window: Window,
         note: str) -> str:
    """The whole page: each panel of `dashboard` with its series (by panel id)."""
    panels = []
    bottom = 0.0
    for panel in dashboard["panels"]:
        left, top, width, height = box(panel)
        bottom = max(bottom, top + height)
        series = data[panel["id"]]
        body = (stat(panel, series) if panel["type"] == "stat"
                else timeseries(panel, series, window, width, height))
        panels.append(f'<div class="panel" style="left:{left:.0f}px;top:{top:.0f}px;'
                      f'width:{width:.0f}px;height:{height:.0f}px">'
                      f'<div class="title">{html.escape(panel["title"])}</div>{body}</div>')
    span = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(window.start)) + " to " + \
        time.strftime("%H:%M:%S UTC", time.gmtime(window.end))
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(dashboard['title'])}</title><style>{STYLE}</style></head>"
            f'<body style="height:{bottom + GAP_PX:.0f}px"><header>'
            f"<h1>{html.escape(dashboard['title'])}</h1><span>{span}</span>"
            f"<span>{html.escape(note)}</span></header>{''.join(panels)}</body></html>")
