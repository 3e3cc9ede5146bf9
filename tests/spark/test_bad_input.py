"""Records that cannot be applied are counted, logged and dead-lettered; the batch goes on."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from connector.schema import Column, TableSchema
from spark_consumer.iceberg.offsets import table_offsets
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.spark.events import Changes
from tests.spark.helpers import apply_once, table_rows, topic_ends

pytestmark = pytest.mark.spark

THINGS = TableSchema("app", "things", (Column("id", "int", nullable=False),
                                       Column("v", "varchar", length=10)), ("id",))


def test_not_json_and_unknown_op_are_dead_lettered_and_the_rest_applied(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    changes = Changes(THINGS, unique_name)
    topic = changes.topic
    create_topic(broker.bootstrap, topic, 1)
    good = [changes.upsert("c", {"id": i, "v": f"v{i}"}) for i in range(3)]
    key7 = changes.encoder.key({"id": 7})
    assert key7 is not None
    key8, value8 = changes.upsert("c", {"id": 8, "v": "no"})
    assert value8 is not None
    bad = [(key7, b"{not json"),                                               # offset 1
           (key8, value8.replace(b'"op":"c"', b'"op":"x"')),                   # offset 2
           (None, changes.upsert("c", {"id": 9, "v": "no key"})[1])]           # offset 3
    produce(broker.bootstrap, topic, [good[0], *bad, good[1], good[2]])

    with caplog.at_level(logging.WARNING, logger="spark_consumer"):
        job = apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)

    assert job.dead_letters == 3
    lines = [json.loads(x) for x in (tmp_path / "dead-letter.jsonl").read_text().splitlines()]
    assert [(d["offset"], d["reason"].split(":")[0]) for d in lines] == [
        (1, "value is not JSON"), (2, "unknown op 'x'"), (3, "no Kafka key (table without primary key?)")]
    assert lines[0]["value"] == "{not json" and lines[0]["key"] == key7.decode()
    warnings = [r.getMessage() for r in caplog.records if "bad record" in r.getMessage()]
    assert len(warnings) == 3 and "unknown op 'x'" in warnings[1]
    table = f"gtidmark.{unique_name}.things"
    assert table_rows(spark, table) == [{"id": i, "v": f"v{i}"} for i in range(3)]
    assert table_offsets(spark, table) == {topic: topic_ends(broker.bootstrap, topic, 1)}
