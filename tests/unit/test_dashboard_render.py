"""bench/dashboard*.py: Grafana's variables substituted as Grafana does, legends, and the page
of panels on the 24-column grid (no Prometheus: series given)."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from bench.dashboard import Series, Window, expression, legend, load
from bench.dashboard_html import box, number, page, ticks


def dashboard_with(variables: list[dict[str, Any]]) -> dict[str, Any]:
    return {"templating": {"list": variables}}


def test_grafana_variables_are_substituted_and_an_unknown_one_is_refused() -> None:
    window = Window(start=1000.0, end=1060.0, scrape_s=5.0)  # one minute, 5 s scrapes
    plain = dashboard_with([])
    # A minute over 400 points is 150 ms: $__interval is the scrape interval, and
    # $__rate_interval Grafana's max($__interval + scrape, 4 * scrape).
    assert expression("rate(x[$__rate_interval])", plain, window, 6) == "rate(x[20s])"
    assert expression("avg_over_time(x[$__interval])", plain, window, 6) == \
        "avg_over_time(x[5s])"
    assert expression("increase(x[${__range}]) / $__range_s", plain, window, 6) == \
        "increase(x[60s]) / 60"
    assert expression('label_replace(x, "a", "$1", "b", "(.*)")', plain, window, 6) == \
        'label_replace(x, "a", "$1", "b", "(.*)")'
    templated = dashboard_with([{"name": "connector", "current": {"value": "shop"}},
                                {"name": "table", "current": {"value": ["a.t", "b.u"]}}])
    assert expression('x{name="$connector", table=~"[[table]]"}', templated, window, 6) == \
        'x{name="shop", table=~"(a.t|b.u)"}'
    with pytest.raises(ValueError, match="no variable 'nothing'"):
        expression("x[$nothing]", plain, window, 6)
    hours = Window(start=0.0, end=6 * 3600.0, scrape_s=5.0)  # 6 h over 1,600 points: 15 s
    assert expression("x[$__interval]", plain, hours, 24) == "x[15s]"


def test_legends_follow_the_legend_format() -> None:
    labels = {"__name__": "debezium_metrics_RowsScanned", "table": "shop.orders"}
    assert legend("{{table}}", labels) == "shop.orders"
    assert legend("rows of {{ table }}{{missing}}", labels) == "rows of shop.orders"
    assert legend("", labels) == 'debezium_metrics_RowsScanned{table="shop.orders"}'


def test_units_and_axis_ticks() -> None:
    assert number(0.25, "percentunit") == "25.0%"
    assert number(91_000_000, "bytes") == "86.8 MiB"
    assert number(364, "ms") == "364 ms" and number(2500, "ms") == "2.5 s"
    assert number(2730, "ops") == "2.73 K ops/s" and number(3, "short") == "3"
    assert ticks(0, 558) == [0, 200, 400, 600]
    assert ticks(0, 0) == [0, 0.25, 0.5, 0.75, 1]  # a series of zeros still has an axis
    assert ticks(-1, 400) == [-200, 0, 200, 400]


def test_every_panel_is_drawn_in_its_grid_cell() -> None:
    dashboard = load()
    window = Window(start=1000.0, end=1240.0, scrape_s=5.0)
    points = [(1000.0 + 5 * i, float(i % 7)) for i in range(49)]
    data = {p["id"]: [Series(f"series of {p['id']}", points)] for p in dashboard["panels"]}
    text = page(dashboard, data, window, "note")
    drawn = re.findall(r'<div class="panel" style="left:(\d+)px;top:(\d+)px;width:(\d+)px;'
                       r'height:(\d+)px"><div class="title">([^<]*)</div>', text)
    assert [title for *_, title in drawn] == [p["title"] for p in dashboard["panels"]]
    for panel, (left, top, width, height, _) in zip(dashboard["panels"], drawn, strict=True):
        assert (int(left), int(top), int(width), int(height)) == \
            tuple(round(v) for v in box(panel))
    # Panels side by side on a row touch the page's edges and do not overlap.
    first_row = sorted(box(p) for p in dashboard["panels"] if p["gridPos"]["y"] == 0)
    assert first_row[0][0] == 8 and round(first_row[-1][0] + first_row[-1][2]) == 1600 - 8
    for a, b in itertools.pairwise(first_row):
        assert a[0] + a[2] < b[0]
    timeseries = [p for p in dashboard["panels"] if p["type"] == "timeseries"]
    assert text.count("<polyline") == len(timeseries)
    assert "No data" not in text
