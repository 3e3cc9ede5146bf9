"""A Connect worker's properties under the connector file: where the keys come from, which
wins, and the Java clients' security settings as librdkafka's (or one line each)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from connector.settings.errors import ConfigProblems
from connector.settings.parse import load_config
from connector.settings.worker import read_properties

CONNECTOR: dict[str, Any] = {
    "connector.class": "io.debezium.connector.mysql.MySqlConnector",
    "database.hostname": "replica.example", "database.user": "cdc",
    "database.server.id": "5400", "topic.prefix": "shop",
}
PLAIN = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
         'username="alice" password="s3c\\"ret";')


def _load(tmp_path: Path, worker: str, **connector: Any) -> Any:
    (tmp_path / "connector.json").write_text(json.dumps(
        {"name": "shop", "config": {**CONNECTOR, **connector}}))
    (tmp_path / "worker.properties").write_text(worker)
    return load_config(tmp_path / "connector.json", tmp_path / "worker.properties")


def test_java_properties_syntax(tmp_path: Path) -> None:
    path = tmp_path / "w.properties"
    path.write_text("# a comment\n! another\n  bootstrap.servers = k1:9092,\\\n    k2:9092\n"
                    "group.id: connect-cluster\nkey\\=with\\:colon value\\tx\\u00e9\n"
                    "empty=\n")
    assert read_properties(path) == {
        "bootstrap.servers": "k1:9092,k2:9092", "group.id": "connect-cluster",
        "key=with:colon": "value\tx\u00e9", "empty": ""}


def test_worker_keys_fill_in_and_the_connectors_win(tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    worker = ("bootstrap.servers=kafka:9092\ngroup.id=connect-cluster\n"
              "offset.storage.topic=connect-offsets\noffset.storage.partitions=5\n"
              "config.storage.topic=connect-configs\nstatus.storage.topic=connect-status\n"
              "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
              "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
              "key.converter.schemas.enable=false\nvalue.converter.schemas.enable=false\n"
              "plugin.path=/usr/share/java\nexactly.once.source.support=enabled\n"
              "producer.linger.ms=5\nproducer.acks=all\nconsumer.fetch.min.bytes=7\n"
              "frobnicate=1\n")
    with caplog.at_level(logging.WARNING):
        c = _load(tmp_path, worker, **{"value.converter.schemas.enable": "true",
                                       "producer.acks": "1",
                                       "producer.override.linger.ms": "20"})
    assert (c.bootstrap_servers, c.offsets_topic, c.offset_storage_partitions) == \
        ("kafka:9092", "connect-offsets", 5)
    assert c.status_topic == "connect-status"  # the connector's state goes where Connect's does
    assert (c.key_schemas_enable, c.value_schemas_enable, c.exactly_once) == \
        (False, True, True)
    assert c.producer == {"linger.ms": "20", "acks": "1"}
    assert c.consumer == {"fetch.min.bytes": "7"}
    assert [r.getMessage() for r in caplog.records] == [
        (f"config: {tmp_path / 'worker.properties'}: worker key 'frobnicate' ignored (not "
         "one gtidmark reads)")]


def test_sasl_and_pem_truststore_become_librdkafka_settings(tmp_path: Path) -> None:
    worker = ("bootstrap.servers=kafka:9093\nsecurity.protocol=SASL_SSL\n"
              "sasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security."
              'plain.PlainLoginModule required username="alice" password="s3cret";\n'
              "ssl.truststore.type=PEM\nssl.truststore.location=/etc/kafka/ca.pem\n"
              "ssl.endpoint.identification.algorithm=https\nssl.protocol=TLSv1.3\n"
              "producer.security.protocol=SASL_SSL\nproducer.sasl.mechanism=SCRAM-SHA-512\n"
              "producer.sasl.jaas.config=org.apache.kafka.common.security.scram."
              "ScramLoginModule required username=bob password=pw;\n")
    c = _load(tmp_path, worker)
    common = {k: v for k, v in c.kafka_common().items() if k != "logger"}
    assert common == {"bootstrap.servers": "kafka:9093", "security.protocol": "SASL_SSL",
                      "sasl.mechanism": "PLAIN", "sasl.username": "alice",
                      "sasl.password": "s3cret", "ssl.ca.location": "/etc/kafka/ca.pem",
                      "ssl.endpoint.identification.algorithm": "https"}
    assert c.producer == {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                          "sasl.username": "bob", "sasl.password": "pw"}


def test_producer_override_of_the_connector_maps_the_same_way(tmp_path: Path) -> None:
    c = _load(tmp_path, "bootstrap.servers=kafka:9093\n",
              **{"producer.override.sasl.jaas.config": PLAIN,
                 "producer.override.ssl.keystore.type": "PKCS12",
                 "producer.override.ssl.keystore.location": "/etc/kafka/client.p12",
                 "producer.override.ssl.keystore.password": "kpw"})
    assert c.producer == {"sasl.username": "alice", "sasl.password": 's3c"ret',
                          "sasl.mechanism": "PLAIN",
                          "ssl.keystore.location": "/etc/kafka/client.p12",
                          "ssl.keystore.password": "kpw"}


def test_a_clients_jaas_config_takes_the_top_level_mechanism(tmp_path: Path) -> None:
    c = _load(tmp_path, "bootstrap.servers=kafka:9093\nsasl.mechanism=SCRAM-SHA-512\n"
              "consumer.sasl.jaas.config=org.apache.kafka.common.security.scram."
              "ScramLoginModule required username=carol password=pw;\n")
    assert c.consumer_settings()["sasl.mechanism"] == "SCRAM-SHA-512"
    assert c.consumer == {"sasl.username": "carol", "sasl.password": "pw"}


def test_settings_in_librdkafkas_names_pass_unchanged(tmp_path: Path) -> None:
    c = _load(tmp_path, "bootstrap.servers=kafka:9093\n",
              **{"producer.ssl.keystore.location": "/etc/kafka/client.p12",
                 "producer.ssl.keystore.password": "kpw",
                 "producer.ssl.key.location": "/k.pem", "producer.ssl.key.password": "x",
                 "producer.ssl.ca.location": "/ca.pem", "producer.sasl.username": "u"})
    assert c.producer == {"ssl.keystore.location": "/etc/kafka/client.p12",
                          "ssl.keystore.password": "kpw", "ssl.key.location": "/k.pem",
                          "ssl.key.password": "x", "ssl.ca.location": "/ca.pem",
                          "sasl.username": "u"}


def test_what_librdkafka_cannot_read_is_one_line_each(tmp_path: Path) -> None:
    worker = ("bootstrap.servers=kafka:9093\nssl.truststore.location=/etc/kafka/trust.jks\n"
              "ssl.truststore.password=changeit\nconsumer.ssl.keystore.location=/k.jks\n"
              "consumer.ssl.keystore.type=JKS\n"
              "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer."
              "OAuthBearerLoginModule required;\n")
    with pytest.raises(ConfigProblems) as err:
        _load(tmp_path, worker)
    source = tmp_path / "connector.json"
    assert err.value.lines == [
        (f"{source}: sasl.jaas.config: login module org.apache.kafka.common.security."
         "oauthbearer.OAuthBearerLoginModule is not mapped to librdkafka (PlainLoginModule "
         "and ScramLoginModule are); set librdkafka's own sasl.* settings instead"),
        (f"{source}: ssl.truststore.location: a JKS truststore cannot be read by librdkafka; "
         "export its certificates as PEM (keytool -exportcert -rfc) and set "
         "ssl.truststore.type=PEM"),
        (f"{source}: consumer.ssl.keystore.location: a JKS keystore cannot be read by "
         "librdkafka; convert it to PKCS12 (consumer.ssl.keystore.type=PKCS12) or give "
         "consumer.ssl.keystore.certificate.chain and consumer.ssl.keystore.key"),
    ]
