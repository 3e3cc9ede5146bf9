"""Consumed Kafka offsets stored in the Iceberg snapshot summary of the commit that applied them.

Other commits (compaction, a manual DELETE, any other writer) carry no offsets, so the job
reads them from the newest snapshot in the current snapshot's ancestry that has them.

Iceberg's Spark writes read extra summary properties from the thread-local
`org.apache.iceberg.spark.CommitMetadata` (what `withCommitProperties` sets); a MERGE run
from the same driver thread commits them atomically with its data and delete files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pyspark.sql import SparkSession

OFFSETS_PROPERTY = "gtidmark.offsets"
TOPIC_IDS_PROPERTY = "gtidmark.topic-ids"  # {topic: Kafka topic id} the offsets belong to
PARTITIONS_PROPERTY = "gtidmark.partitions"  # {topic: partition count} the offsets were read in
SUMMARY_PROPERTIES = (OFFSETS_PROPERTY, TOPIC_IDS_PROPERTY, PARTITIONS_PROPERTY)

Offsets = dict[str, dict[int, int]]  # topic -> partition -> next offset to read


def encode_offsets(offsets: Offsets) -> str:
    return json.dumps({t: {str(p): o for p, o in sorted(ps.items())}
                       for t, ps in sorted(offsets.items())}, separators=(",", ":"))


def decode_offsets(text: str | None) -> Offsets:
    if not text:
        return {}
    raw = json.loads(text)
    return {str(t): {int(p): int(o) for p, o in ps.items()} for t, ps in raw.items()}


def iceberg_table(spark: SparkSession, name: str) -> Any:
    """The Java Iceberg Table behind a Spark table name, refreshed to its latest metadata."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, name)
    table.refresh()
    return table


def encode_topic_ids(ids: dict[str, str]) -> str:
    return json.dumps(dict(sorted(ids.items())), separators=(",", ":"))


def decode_topic_ids(text: str | None) -> dict[str, str]:
    return {str(k): str(v) for k, v in json.loads(text).items()} if text else {}


def encode_partition_counts(counts: dict[str, int]) -> str:
    return json.dumps(dict(sorted(counts.items())), separators=(",", ":"))


def decode_partition_counts(text: str | None) -> dict[str, int]:
    return {str(k): int(v) for k, v in json.loads(text).items()} if text else {}


class OffsetsLostError(RuntimeError):
    """The snapshots that carried the job's offsets were expired (message: one line)."""


def committed_summary(spark: SparkSession, name: str) -> dict[str, str]:
    """The summary of the newest ancestor of the current snapshot carrying our offsets.

    {} for a table with no such snapshot; OffsetsLostError when the ancestry is cut short
    (expired snapshots) before one is found, since resuming from 0 would re-apply everything.
    """
    table = iceberg_table(spark, name)
    snapshot = table.currentSnapshot()
    while snapshot is not None:
        summary = snapshot.summary()
        if summary.containsKey(OFFSETS_PROPERTY):
            return {key: str(summary.get(key)) for key in SUMMARY_PROPERTIES
                    if summary.containsKey(key)}
        parent = snapshot.parentId()
        if parent is None:
            return {}
        snapshot = table.snapshot(parent)
        if snapshot is None:
            raise OffsetsLostError(
                f"table {name}: no snapshot left in its history carries gtidmark offsets "
                f"(snapshot {parent} expired); expire snapshots only after the job has "
                f"committed once since the last foreign commit, or rebuild the table")
    return {}


def table_offsets(spark: SparkSession, name: str) -> Offsets:
    """Offsets the job committed last to table `name` ({} before the first commit)."""
    return decode_offsets(committed_summary(spark, name).get(OFFSETS_PROPERTY))


def _thread_local(spark: SparkSession) -> Any:
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    cls = jvm.java.lang.Class.forName("org.apache.iceberg.spark.CommitMetadata", True, loader)
    field = cls.getDeclaredField("COMMIT_PROPERTIES")
    field.setAccessible(True)
    return field.get(None)


@contextmanager
def commit_properties(spark: SparkSession, props: dict[str, str]) -> Iterator[None]:
    """Iceberg writes started by this Python thread inside the block carry `props`."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    local = _thread_local(spark)
    jmap = jvm.java.util.HashMap()
    for key, value in props.items():
        jmap.put(key, value)
    local.set(jmap)
    try:
        yield
    finally:
        local.remove()


def commit_offsets_only(spark: SparkSession, name: str, props: dict[str, str]) -> None:
    """An empty append snapshot carrying `props`: for batches with nothing to merge."""
    append = iceberg_table(spark, name).newAppend()
    for key, value in props.items():
        append = append.set(key, value)
    append.commit()
