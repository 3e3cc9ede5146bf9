"""PUT /connectors/<name>/config: the running config again is taken, anything else refused
with Kafka Connect's status and, where Connect has them, its words."""

from __future__ import annotations

import json
from typing import Any

import pytest

from connector.offsets.rest_body import BadBody
from connector.rest.config_put import BadConfig, check_put
from connector.rest.connect import connector_config
from connector.settings.parse import parse_config

CONFIG = parse_config({"name": "shop-connector", "config": {
    "connector.class": "io.debezium.connector.mysql.MySqlConnector",
    "database.hostname": "replica", "database.user": "cdc", "database.password": "pw-secret",
    "database.server.id": 5400, "topic.prefix": "shop", "bootstrap.servers": "kafka:9092",
    "snapshot.mode": "no_data", "producer.linger.ms": "5", "rest.port": "8083",
    "transforms": "unwrap",
    "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
    "column.mask.with.4.chars": "shop.customers.email"}})


def put(settings: Any, name: str = "shop-connector") -> None:
    check_put(CONFIG, name, json.dumps(settings).encode())


def test_get_config_shows_the_files_keys_and_takes_them_back() -> None:
    shown = connector_config(CONFIG)
    assert shown["transforms.unwrap.type"] == "io.debezium.transforms.ExtractNewRecordState"
    assert shown["column.mask.with.4.chars"] == "shop.customers.email"
    assert shown["producer.linger.ms"] == "5" and shown["database.password"] == "********"
    assert not {"column_mappers", "transform_settings", "producer"} & set(shown)
    put(shown)  # GET, then PUT back as is: the redacted password stands for the running one
    put({**shown, "database.password": "pw-secret", "database.server.id": 5400})
    put({k: v for k, v in shown.items() if k != "name"})  # the URL names it
    # A key a file may set that changes nothing here (Debezium's poll batch) changes nothing.
    put({**shown, "max.batch.size": "1024"})


@pytest.mark.parametrize(("raw", "why"), [
    (b"", "No content"), (b"{not json", "not JSON"), (b'["a"]', "from list"),
    (b'{"topic.prefix": {"a": 1}}', "from dict")])
def test_a_body_that_is_no_string_map_is_a_500(raw: bytes, why: str) -> None:
    with pytest.raises(BadBody, match=why):
        check_put(CONFIG, "shop-connector", raw)


def test_connects_refusals_in_its_words() -> None:
    shown = connector_config(CONFIG)
    with pytest.raises(BadConfig) as mismatch:
        put({**shown, "name": "other"})
    assert str(mismatch.value) == ("Connector name configuration (other) doesn't match "
                                   "connector name in the URL (shop-connector)")
    with pytest.raises(BadConfig) as typeless:
        put({"database.password": "x"}, name="other")
    assert str(typeless.value) == ("Connector config {database.password=********, name=other}"
                                   " contains no connector type")
    with pytest.raises(BadConfig) as invalid:
        put({**shown, "snapshot.mode": "sometimes"})
    lines = str(invalid.value).splitlines()
    assert lines[0] == ("Connector configuration is invalid and contains the following 1 "
                        "error(s):")
    assert "snapshot.mode" in lines[1]
    assert lines[-1] == ("You can also find the above list of errors at the endpoint "
                         "`/connector-plugins/{connectorType}/config/validate`")


def test_a_change_or_another_connector_is_refused_naming_the_keys_not_the_values() -> None:
    shown = connector_config(CONFIG)
    with pytest.raises(BadConfig) as changed:
        put({**shown, "database.include.list": "shop,crm", "database.password": "new-secret",
             "producer.linger.ms": "10"})
    message = str(changed.value)
    assert "change the file and restart the process" in message
    assert "database.include.list" in message and "database.password" in message
    assert "producer.linger.ms" in message and "new-secret" not in message
    with pytest.raises(BadConfig, match="runs one connector, shop-connector"):
        put({**shown, "name": "other"}, name="other")
