"""`gtidmark run --config connector.json --worker connect-distributed.properties`: a
connector file as Connect users keep it (no Kafka settings) runs on the worker's."""

from __future__ import annotations

import json
from pathlib import Path

from tests.connector_tools import ConnectorProcess, connector_document, wait_until
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, list_topics
from tests.services import MariaDbPair


def test_a_connector_file_without_kafka_settings_streams_on_the_workers(
        mariadb: MariaDbPair, broker: Broker, tmp_path: Path) -> None:
    db = "workerprops"
    doc = connector_document(mariadb, broker, db)
    del doc["config"]["bootstrap.servers"]
    worker = tmp_path / "connect-distributed.properties"
    worker.write_text(
        "# a distributed worker's file, as Connect ships it\n"
        f"bootstrap.servers={broker.bootstrap}\ngroup.id=connect-cluster\n"
        f"offset.storage.topic={db}-connect-offsets\noffset.storage.partitions=1\n"
        "config.storage.topic=connect-configs\nstatus.storage.topic=connect-status\n"
        "key.converter=org.apache.kafka.connect.json.JsonConverter\n"
        "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
        "key.converter.schemas.enable=false\nvalue.converter.schemas.enable=false\n"
        "offset.flush.interval.ms=10000\nplugin.path=/usr/share/java\nlisteners=http://:8083\n")
    ours = ConnectorProcess(doc, tmp_path)
    ours.run_options = ["--worker", str(worker)]
    ours.start()
    try:
        ours.wait_log("streaming from", timeout=120)
        mariadb.primary.execute(f"CREATE DATABASE {db}")
        mariadb.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(5))")
        mariadb.primary.execute(f"INSERT INTO {db}.t VALUES (1, 'a')")
        topic = f"{db}.{db}.t"
        wait_until(lambda: topic in list_topics(broker.bootstrap)
                   and len(consume_all(broker.bootstrap, topic)) == 1, 120,
                   "the insert's record")
        [record] = consume_all(broker.bootstrap, topic)
        # The worker's converters: JSON without schemas, key and value.
        assert json.loads(record.key()) == {"id": 1}
        assert json.loads(record.value())["after"] == {"id": 1, "v": "a"}
        wait_until(lambda: f"{db}-connect-offsets" in list_topics(broker.bootstrap), 60,
                   "the worker's offsets topic")
    finally:
        assert ours.stop() == 0
    log = ours.log()
    assert "worker key" not in log and "unknown key" not in log, log
