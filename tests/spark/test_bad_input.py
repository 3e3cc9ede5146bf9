"""Records that cannot be applied are counted, logged and dead-lettered; the batch goes on."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_consumer.offsets import table_offsets
from tests.kafka_tools import create_topic, produce
from tests.services import Broker
from tests.spark import events as ev
from tests.spark.helpers import apply_once, table_rows, topic_ends

pytestmark = pytest.mark.spark

FIELDS = [ev.fld("id", "int32", optional=False), ev.fld("v", "string")]
KEY = [ev.fld("id", "int32", optional=False)]


def test_not_json_and_unknown_op_are_dead_lettered_and_the_rest_applied(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    topic = f"{unique_name}.app.things"
    create_topic(broker.bootstrap, topic, 1)

    def k(id_: int) -> bytes:
        return ev.key({"id": id_}, KEY)

    good = [(k(i), ev.value("c", None, {"id": i, "v": f"v{i}"}, FIELDS)) for i in range(3)]
    bad = [(k(7), b"{not json"),                                               # offset 1
           (k(8), ev.value("x", None, {"id": 8, "v": "no"}, FIELDS)),          # offset 2
           (None, ev.value("c", None, {"id": 9, "v": "no key"}, FIELDS))]      # offset 3
    produce(broker.bootstrap, topic, [good[0], *bad, good[1], good[2]])

    with caplog.at_level(logging.WARNING, logger="spark_consumer"):
        job = apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)

    assert job.dead_letters == 3
    lines = [json.loads(x) for x in (tmp_path / "dead-letter.jsonl").read_text().splitlines()]
    assert [(d["offset"], d["reason"].split(":")[0]) for d in lines] == [
        (1, "value is not JSON"), (2, "unknown op 'x'"), (3, "no Kafka key (table without primary key?)")]
    assert lines[0]["value"] == "{not json" and lines[0]["key"] == '{"schema": ' \
        '{"type": "struct", "fields": [{"field": "id", "type": "int32", "optional": false}], ' \
        '"optional": false, "name": "x.Key"}, "payload": {"id": 7}}'
    warnings = [r.getMessage() for r in caplog.records if "bad record" in r.getMessage()]
    assert len(warnings) == 3 and "unknown op 'x'" in warnings[1]
    table = f"gtidmark.{unique_name}.things"
    assert table_rows(spark, table) == [{"id": i, "v": f"v{i}"} for i in range(3)]
    assert table_offsets(spark, table) == {topic: topic_ends(broker.bootstrap, topic, 1)}
