"""A topic written with `transforms=unwrap` (ExtractNewRecordState) holds rows without their
change envelope: spark-apply refuses it in one line naming the topic and the setting, exit 2,
before it commits anything, instead of dead-lettering every record and reporting it caught up.
The records are the connector's own: its encoder and its unwrap transform."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from connector.events import EventEncoder
from connector.events.unwrap import with_transforms
from spark_consumer.job.main import EXIT_USAGE, main
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.unit.test_envelope import SOURCE
from tests.unit.test_unwrap import ROW, TABLE, Collect, unwrap_config

pytestmark = pytest.mark.spark


def connector_records(prefix: str, **unwrap: str) -> tuple[str, list[tuple[bytes | None,
                                                                          bytes | None]]]:
    """A create, an update and a delete of one row as the connector sends them with unwrap."""
    cfg = unwrap_config({"topic.prefix": prefix}, **unwrap)
    encoder, out = EventEncoder(cfg), Collect()
    sink, table = with_transforms(cfg.unwrap, out, encoder), encoder.table(TABLE)
    changed = dict(ROW, v="y")
    for op, before, after in (("c", None, ROW), ("u", ROW, changed), ("d", changed, None)):
        sink.send(table.topic, table.key(ROW), table.value(op, before, after, SOURCE, 5))
    return table.topic, [(key, value) for _, key, value, _ in out.sent]


@pytest.mark.parametrize("unwrap", [{}, {"delete_tombstone_handling_mode": "rewrite",
                                         "add_fields": "op"}], ids=["tombstone", "rewrite"])
def test_a_flattened_topic_is_refused_in_one_line_and_nothing_is_committed(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], unwrap: dict[str, str]) -> None:
    topic, records = connector_records(unique_name, **unwrap)
    create_topic(broker.bootstrap, topic, 1)
    produce(broker.bootstrap, topic, records)
    warehouse = spark.conf.get("spark.sql.catalog.gtidmark.warehouse") or ""

    code = main(["--bootstrap-servers", broker.bootstrap, "--topics", topic, "--once",
                 "--warehouse", warehouse, "--namespace", unique_name, "--dead-letter", str(tmp_path / "dl.jsonl")])

    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_USAGE
    assert err == [(f"error: topic {topic} holds flattened records (offset 0: the connector "
                    "has transforms=unwrap, io.debezium.transforms.ExtractNewRecordState); "
                    "spark-apply needs Debezium's change envelope: drop the unwrap transform "
                    "for the topics spark-apply reads")]
    assert not (tmp_path / "dl.jsonl").exists()
    with pytest.raises(AnalysisException):
        spark.table(f"gtidmark.{unique_name}.items").count()
