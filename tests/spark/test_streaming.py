"""The README's Structured Streaming block, run as written: a streaming query and spark-apply
take over from each other, and a micro-batch Spark replays applies nothing twice."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from connector.schema import Column, TableSchema
from spark_consumer.iceberg.offsets import table_offsets
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.spark.events import Changes, Item
from tests.spark.helpers import apply_once, table_rows, topic_ends
from tests.spark.test_keyless import BAG, Row, multiset, table_multiset, workload

pytestmark = pytest.mark.spark

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "### Structured Streaming"
_SETTING = re.compile(r"^([A-Z][A-Z0-9_]*) = .*$", re.MULTILINE)

COUNTER_COLUMNS = (Column("id", "bigint", nullable=False), Column("n", "bigint"))


def readme_block() -> tuple[list[str], str]:
    """The section's python block: the names of its settings and the code without them."""
    section = README.read_text(encoding="utf-8").split(SECTION, 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, f"no ```python block under {SECTION!r} in the README"
    return _SETTING.findall(match.group(1)), _SETTING.sub("", match.group(1))


def run_readme_query(spark: SparkSession, settings: dict[str, str]) -> Any:
    """The block as a user runs it (their session is `spark`), with the test's settings;
    returns its query, terminated (availableNow)."""
    names, code = readme_block()
    assert sorted(names) == sorted(settings), "the block's settings changed"
    scope: dict[str, Any] = {"spark": spark, **settings}
    exec(compile(code, str(README), "exec"), scope)  # noqa: S102 - the README's own code
    return scope["query"]


class Source:
    """A keyed table (updates and deletes, 2 partitions) and a table without a key (whole
    rows: a record applied twice leaves a row twice), and the rows they should hold. Their
    database is `db`, so their tables are `gtidmark.<db>.*` without --namespace."""

    def __init__(self, broker: Broker, db: str) -> None:
        self.bootstrap = broker.bootstrap
        self.keyed = Changes(TableSchema(db, "counters", COUNTER_COLUMNS, ("id",)), db)
        self.bag = Changes(TableSchema(db, "bag", BAG.columns, ()), db)
        create_topic(self.bootstrap, self.keyed.topic, 2)
        create_topic(self.bootstrap, self.bag.topic, 1)
        self.rows: dict[int, Row] = {}
        self.bag_rows: list[Row] = []
        self.rng = random.Random(11)
        self.n = 0

    @property
    def topics(self) -> list[str]:
        return [self.keyed.topic, self.bag.topic]

    def write(self, count: int) -> None:
        items: list[Item] = []
        for _ in range(count):
            self.n += 1
            id_ = self.rng.randrange(40)
            if id_ in self.rows and self.rng.random() < 0.2:
                items += self.keyed.delete(self.rows.pop(id_))
                continue
            op = "u" if id_ in self.rows else "c"
            self.rows[id_] = {"id": id_, "n": self.n}
            items.append(self.keyed.upsert(op, self.rows[id_]))
        produce(self.bootstrap, self.keyed.topic, items)
        produce(self.bootstrap, self.bag.topic,
                workload(self.bag, self.bag_rows, count // 2, self.rng))

    def check(self, spark: SparkSession, namespace: str) -> None:
        """Both tables equal the source and their offsets are the topics' ends."""
        assert table_rows(spark, f"gtidmark.{namespace}.counters") == \
            [self.rows[k] for k in sorted(self.rows)]
        assert table_multiset(spark, f"gtidmark.{namespace}.bag") == multiset(self.bag_rows)
        for table, topic, parts in (("counters", self.keyed.topic, 2), ("bag", self.bag.topic, 1)):
            assert table_offsets(spark, f"gtidmark.{namespace}.{table}") == \
                {topic: topic_ends(self.bootstrap, topic, parts)}


def snapshots(spark: SparkSession, table: str) -> list[int]:
    return sorted(r[0] for r in spark.sql(f"SELECT snapshot_id FROM {table}.snapshots").collect())


def test_readme_streaming_query_and_spark_apply_take_over_and_a_replayed_batch_applies_nothing(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    source = Source(broker, unique_name)
    checkpoint = tmp_path / "checkpoint"
    settings = {"KAFKA": broker.bootstrap, "TOPICS": ",".join(source.topics),
                "WAREHOUSE": spark.conf.get("spark.sql.catalog.gtidmark.warehouse") or "",
                "CHECKPOINT": str(checkpoint)}
    tables = [f"gtidmark.{unique_name}.{name}" for name in ("counters", "bag")]

    source.write(300)  # applied by spark-apply --once
    apply_once(spark, broker.bootstrap, source.topics, unique_name, tmp_path)
    source.check(spark, unique_name)

    source.write(300)  # the query's first batch holds both writes: only the second applies
    query = run_readme_query(spark, settings)
    assert sum(p["numInputRows"] for p in query.recentProgress) > 0
    source.check(spark, unique_name)

    # A crash after the Iceberg commit, before the checkpoint's: Spark runs the batch again.
    last = max(int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit())
    for name in (str(last), f".{last}.crc"):  # the commit file and its checksum
        (checkpoint / "commits" / name).unlink()
    before = [snapshots(spark, t) for t in tables]
    query = run_readme_query(spark, settings)
    replayed = [p for p in query.recentProgress if p["batchId"] == last]
    assert replayed and replayed[0]["numInputRows"] > 0, query.recentProgress
    assert [snapshots(spark, t) for t in tables] == before  # nothing committed
    source.check(spark, unique_name)

    source.write(300)  # the query goes on from its checkpoint
    run_readme_query(spark, settings)
    source.check(spark, unique_name)

    shutil.rmtree(checkpoint)  # a lost checkpoint: read from the beginning, applies only the new
    source.write(300)
    run_readme_query(spark, settings)
    source.check(spark, unique_name)

    source.write(300)  # and spark-apply goes on from the query's offsets
    apply_once(spark, broker.bootstrap, source.topics, unique_name, tmp_path)
    source.check(spark, unique_name)
