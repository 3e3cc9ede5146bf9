"""docker/ profile monitoring: Prometheus scrapes the connector's /metrics and Grafana's
gtidmark dashboard queries only series that /metrics really serves (names from the code)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from connector.control import EngineView, SnapshotView
from connector.rest.metrics import registry
from tests.unit.test_docker_files import DOCKER, STACKS, bind_mounts, compose, mounted_config

MONITORING = DOCKER / "monitoring"
DASHBOARD = MONITORING / "gtidmark-dashboard.json"
# PromQL words that are not metric names.
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset",
            "and", "or", "unless", "inf", "nan"}
SELECTOR = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{([^}]*)\})?")
# What the dashboard must show at least (issue #24): idle time, events, snapshot, queue, lag.
WANTED = {"debezium_metrics_MilliSecondsSinceLastEvent", "debezium_metrics_TotalNumberOfEventsSeen",
          "debezium_metrics_RemainingTableCount", "debezium_metrics_RowsScanned",
          "debezium_metrics_QueueRemainingCapacity", "debezium_metrics_MilliSecondsBehindSource"}


def served() -> list[tuple[str, dict[str, str]]]:
    """(sample name, labels) of every series /metrics serves while a snapshot runs, plus the
    `job` label Prometheus adds from the scrape config."""
    config = mounted_config("compose.yaml")
    view = EngineView(state="RUNNING", connected=True, snapshot=SnapshotView(
        running=True, total_tables=2, remaining_tables=1, rows_scanned={"shop.orders": 5}))
    text = generate_latest(registry(config, lambda: view)).decode()
    job = scrape_job()["job_name"]
    return [(s.name, {**s.labels, "job": job})
            for family in text_string_to_metric_families(text) for s in family.samples]


def scrape_job() -> dict[str, Any]:
    prometheus = yaml.safe_load((MONITORING / "prometheus.yml").read_text(encoding="utf-8"))
    (job,) = prometheus["scrape_configs"]
    assert isinstance(job, dict)
    return job


def expressions() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]


def selectors(expr: str) -> list[tuple[str, dict[str, str]]]:
    """The (metric name, equality matchers) an expression selects."""
    bare = re.sub(r"\[[^\]]*\]", "", expr)  # range durations
    bare = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", "", bare)  # label lists
    out = []
    for match in SELECTOR.finditer(bare):
        name, matchers = match.group(1), match.group(2) or ""
        rest = bare[match.end():].lstrip()
        if name in KEYWORDS or rest.startswith("(") or re.fullmatch(r"[\d.]+", name):
            continue
        out.append((name, dict(re.findall(r'(\w+)\s*=\s*"([^"]*)"', matchers))))
    return out


def test_every_dashboard_query_selects_a_series_gtidmark_serves() -> None:
    series = served()
    queried = set()
    for expr in expressions():
        found = selectors(expr)
        assert found, f"no metric in {expr!r}"
        for name, matchers in found:
            assert any(n == name and matchers.items() <= labels.items()
                       for n, labels in series), f"{expr!r}: /metrics serves no {name}{matchers}"
            queried.add(name)
    assert WANTED <= queried


def test_the_selector_parser_finds_names_and_refuses_unserved_ones() -> None:
    assert selectors('rate(a_total{x="1", y=~"z"}[1m]) * 60 - b / 1000') == [
        ("a_total", {"x": "1"}), ("b", {})]
    assert selectors("max by (state) (gtidmark_connector_state) == 1") == [
        ("gtidmark_connector_state", {})]
    names = {n for n, _ in served()}
    assert "debezium_metrics_SecondsBehindMaster" not in names  # a name Debezium dropped


@pytest.mark.parametrize("name", sorted(STACKS))
def test_the_monitoring_profile_scrapes_the_connectors_metrics_into_grafana(name: str) -> None:
    services = compose(name)["services"]
    prometheus, grafana = services["prometheus"], services["grafana"]
    assert prometheus["profiles"] == grafana["profiles"] == ["monitoring"]
    config = mounted_config(name)
    job = scrape_job()
    assert job["metrics_path"] == "/metrics"
    assert job["static_configs"] == [{"targets": [f"connector:{config.rest_port}"]}]
    mounts = {target: DOCKER / source for source, target in
              bind_mounts(prometheus) + bind_mounts(grafana)}
    assert mounts["/etc/prometheus/prometheus.yml"] == MONITORING / "prometheus.yml"
    provisioning = "/etc/grafana/provisioning"
    datasources = yaml.safe_load(mounts[f"{provisioning}/datasources/gtidmark.yaml"].read_text())
    (source,) = datasources["datasources"]
    assert source["type"] == "prometheus" and source["url"] == "http://prometheus:9090"
    providers = yaml.safe_load(mounts[f"{provisioning}/dashboards/gtidmark.yaml"].read_text())
    (provider,) = providers["providers"]
    dashboard_path = f"{provider['options']['path']}/gtidmark.json"
    assert mounts[dashboard_path] == DASHBOARD
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert home == dashboard_path
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    for panel in dashboard["panels"]:
        for target in [panel, *panel["targets"]]:
            assert target["datasource"] == {"type": "prometheus", "uid": source["uid"]}
