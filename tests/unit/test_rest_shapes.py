"""REST pieces that are pure logic: offsets bodies, credentials, Connect's config map, metrics."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from connector import __version__
from connector.control import EngineView, SnapshotView
from connector.offsets.rest_body import EMPTY, BadBody, BadOffsets, parse_alter_offsets
from connector.offsets.value import SNAPSHOT_KEY, ConnectorOffsets
from connector.rest.connect import connector_config, offsets, state_info
from connector.rest.gate import credentials_match
from connector.rest.metrics import registry
from connector.settings.parse import parse_config

CONFIG = parse_config({"name": "shop-connector", "config": {
    "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
    "database.hostname": "replica", "database.user": "cdc", "database.password": "pw-secret",
    "database.server.id": "5400", "topic.prefix": "shop", "bootstrap.servers": "kafka:9092",
    "read.only": True, "table.include.list": "shop.a,shop.b", "producer.linger.ms": 5,
    "rest.port": "8083"}})


def body(document: Any) -> bytes:
    return json.dumps(document).encode()


@pytest.mark.parametrize("raw", [b"", b"{nope", b"[]", b'{"key": []}', b'{"offsets": {}}',
                                 b'{"offsets": [123]}', b'{"offsets": [{"key": "val"}]}',
                                 b'{"offsets": [{"partition": []}]}'])
def test_unbindable_offsets_bodies_are_500s(raw: bytes) -> None:
    """The bodies Kafka Connect's OffsetsApiIntegrationTest answers with 500."""
    with pytest.raises(BadBody):
        parse_alter_offsets(raw)


@pytest.mark.parametrize("raw", [b"{}", b'{"offsets": []}'])
def test_empty_offsets_are_400s(raw: bytes) -> None:
    with pytest.raises(BadOffsets, match=EMPTY):
        parse_alter_offsets(raw)


def test_offsets_must_be_this_connectors_partition_and_a_position() -> None:
    good = parse_alter_offsets(body({"offsets": [{"partition": {"server": "shop"},
                                                  "offset": {"gtids": "0-1-5,1-2-9"}}]}))
    good.check(CONFIG)
    assert good.value == {"gtids": "0-1-5,1-2-9"}
    mysql_set = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:etl:1-2"
    tagged = parse_alter_offsets(body({"offsets": [{"partition": {"server": "shop"},
                                                    "offset": {"gtids": mysql_set}}]}))
    tagged.check(CONFIG)  # a MySQL GTID set, tags included
    forget = parse_alter_offsets(body({"offsets": [{"partition": {"server": "shop"},
                                                    "offset": None}]}))
    forget.check(CONFIG)
    assert forget.value is None
    for partition, offset in (({"server": "other"}, {"gtids": ""}),
                              ({"server": "shop"}, {"file": "b.000001"}),
                              ({"server": "shop"}, {"gtids": "not-a-gtid"}),
                              ({"server": "shop"}, {"gtids": "0-1-5", "pos": "x"}),
                              ({"server": "shop"}, {"gtids": "0-1-5", "row": -1}),
                              ({"server": "shop"}, {"gtids": "0-1-5", "pos": 1.5}),
                              ({"server": "shop"}, {"gtids": "0-1-5",
                                                    "signal_source_gtid": "0-1-6",
                                                    "signal_source_row": -1}),
                              ({"server": "shop"}, {"gtids": "0-1-5", SNAPSHOT_KEY: "{"}),
                              ({"server": "shop"}, {"gtids": "0-1-5", SNAPSHOT_KEY: "[1]"}),
                              ({"server": "shop"}, {"gtids": "0-1-5", "snapshot": "{"})):
        item = parse_alter_offsets(body({"offsets": [{"partition": partition,
                                                      "offset": offset}]}))
        with pytest.raises(BadOffsets):
            item.check(CONFIG)


@given(user=st.text(min_size=1).filter(lambda u: ":" not in u), password=st.text(),
       other=st.text())
def test_credentials_match_only_the_pair(user: str, password: str, other: str) -> None:
    def header(u: str, p: str) -> str:
        return "Basic " + base64.b64encode(f"{u}:{p}".encode()).decode()

    assert credentials_match(header(user, password), user, password)
    assert credentials_match(header(user, other), user, password) == (other == password)
    assert not credentials_match(None, user, password)
    assert not credentials_match("Bearer " + password, user, password)
    assert not credentials_match("Basic !!not base64", user, password)


def test_config_is_connects_string_map_without_secrets() -> None:
    shown = connector_config(CONFIG)
    assert shown["database.password"] == "********"
    assert shown["read.only"] == "true" and shown["table.include.list"] == "shop.a,shop.b"
    assert shown["producer.linger.ms"] == "5" and shown["name"] == "shop-connector"
    assert "snapshot.mode" not in shown  # only what the file set, as Connect returns it
    # The parser's groups are shown by the file's keys, never by their own names.
    assert not {"column_mappers", "transform_settings", "topic_creation_settings",
                "kafka_security", "producer"} & set(shown)
    assert all(isinstance(v, str) for v in shown.values())


def test_status_and_offsets_shapes() -> None:
    failed = state_info(CONFIG, EngineView(state="FAILED", trace="Traceback ...\nboom"))
    worker = {"worker_id": "127.0.0.1:8083", "version": __version__}  # the plugin's (KIP-891)
    assert failed["connector"] == {"state": "RUNNING", **worker}
    assert failed["tasks"] == [{"id": 0, "state": "FAILED", **worker,
                                "trace": "Traceback ...\nboom"}]
    assert state_info(CONFIG, EngineView(state="STOPPED"))["tasks"] == []
    assert offsets(CONFIG, None) == {"offsets": []}
    value = ConnectorOffsets(gtids="0-1-1")
    assert offsets(CONFIG, value) == {
        "offsets": [{"partition": {"server": "shop"}, "offset": value.to_json()}]}


def test_metric_names_are_debeziums_jmx_exporter_names() -> None:
    view = EngineView(state="RUNNING", behind_source_ms=12, events_seen=7,
                      snapshot=SnapshotView(rows_scanned={"shop.a": 3, "shop.b": 4}))
    text = generate_latest(registry(CONFIG, lambda: view)).decode()
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families(text) for s in f.samples}
    streaming = (("context", "streaming"), ("name", "shop"), ("plugin", "mariadb"))
    assert samples[("debezium_metrics_MilliSecondsBehindSource", streaming)] == 12
    assert samples[("debezium_metrics_TotalNumberOfEventsSeen", streaming)] == 7
    rows = (("context", "snapshot"), ("name", "shop"), ("plugin", "mariadb"), ("table", "shop.b"))
    assert samples[("debezium_metrics_RowsScanned", rows)] == 4
    assert "debezium_metrics_TotalNumberOfEventsSeen_total" not in text
