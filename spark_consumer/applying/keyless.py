"""Tables without a primary key: changes applied by whole-row match, in topic order.

Debezium sends such a table's records with a null Kafka key and full `before` images. An
insert appends its row; an update or delete removes ONE row equal (null-safe) to its `before`
image. Rows equal in every column are interchangeable, so the table is a multiset: per
distinct row value, the batch is a walk of +1/-1 steps (a delete of a row not there does
nothing), and the row's count after the batch is max(count + total, total - lowest prefix
sum). One MERGE then appends the rows gained and, where rows are lost, deletes every copy of
that value and inserts the copies that remain; it commits with the batch's offsets, so a
rerun of a batch that did not commit starts from the same table and gives the same result.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Generator, Iterator
from typing import Any, cast

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from spark_consumer.decoding.columnar import OP_COLUMN, RawRecord
from spark_consumer.decoding.dbztypes import ColumnSpec
from spark_consumer.decoding.decode import (
    OPS,
    TRUNCATE,
    BadRecord,
    Change,
    DecodeError,
    Decoder,
    Truncate,
    field_schema,
)
from spark_consumer.iceberg.tables import TableState, quote
from spark_consumer.reading.planner import OffsetRange
from spark_consumer.reading.reader import RangeStats, Stamps, read_range
from spark_consumer.reading.source import (
    Side,
    SourceRead,
    _from_rows,
    _map_in_arrow,
    fits,
    source_schema,
)

PART_COLUMN, SEQ_COLUMN = "__gtidmark_part", "__gtidmark_seq"
Step = tuple[int, int, dict[str, Any]]  # +1/-1, place in the partition, the row's columns


class KeylessDecoder(Decoder):
    """The +1/-1 row steps of one record: `c`/`r` add `after`, `d` removes `before`, `u`
    removes `before` then adds `after`; the shapes noted have no key columns."""

    def steps(self, topic: str, partition: int, offset: int,
              value: bytes | None) -> list[Step] | Truncate | BadRecord | None:
        """The record's steps; None for a tombstone."""
        if value is None:
            return None
        try:
            payload, schema = _value(value)
            if payload is None:
                return None
            op = payload.get("op")
            if op == TRUNCATE:
                return Truncate(topic, partition, offset)
            if op not in OPS:
                raise DecodeError(f"unknown op {op!r}")
            steps: list[Step] = []
            if op in ("u", "d"):
                steps.append((-1, offset * 2, self._image(topic, payload, schema, "before")))
            if op != "d":
                steps.append((1, offset * 2 + 1, self._image(topic, payload, schema, "after")))
            return steps
        except DecodeError as exc:
            return BadRecord(topic, partition, offset, str(exc), None, value)

    def _image(self, topic: str, payload: dict[str, Any], schema: dict[str, Any] | None,
               name: str) -> dict[str, Any]:
        image = payload.get(name)
        if not isinstance(image, dict):
            raise DecodeError(f"op {payload.get('op')!r} without a '{name}' object (a table "
                              "without a key is matched on its whole before image)")
        image_schema = field_schema(schema, name)
        row, specs = self._convert(topic, image, image_schema)
        self._note_shape(topic, specs, (), image_schema is not None)
        return row


def _value(raw: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(payload or None for a null payload, schema) of a change record's value."""
    try:
        obj = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DecodeError(f"value is not JSON: {exc}") from None
    schema = None
    if isinstance(obj, dict) and set(obj) == {"schema", "payload"}:
        schema = obj["schema"] if isinstance(obj["schema"], dict) else None
        obj = obj["payload"]
    if obj is not None and not isinstance(obj, dict):
        raise DecodeError("value is not a change envelope (not a JSON object)")
    return obj, schema


def steps_schema(columns: list[ColumnSpec]) -> pa.Schema:
    """(op '+'/'-', col1, col2, ..., partition, place): the keyless source's columns."""
    return source_schema(columns).append(pa.field(PART_COLUMN, pa.int32())).append(
        pa.field(SEQ_COLUMN, pa.int64()))


def _batch(rng: OffsetRange, steps: list[Step], columns: list[ColumnSpec]) -> pa.RecordBatch:
    changes = [Change(rng.topic, rng.partition, 0, "+" if sign > 0 else "-", "", row)
               for sign, _, row in steps]
    rows = _from_rows(changes, source_schema(columns), columns)
    return pa.RecordBatch.from_arrays(
        [*rows.columns, pa.array([rng.partition] * len(steps), pa.int32()),
         pa.array([seq for _, seq, _ in steps], pa.int64())], schema=steps_schema(columns))


def _task(conf: dict[str, str], known: dict[str, dict[str, ColumnSpec]],
          ranges: list[OffsetRange], columns: list[ColumnSpec] | None, side: Side,
          token: str) -> Any:
    """`mapInArrow` over range numbers: every step of each range, in order (no reduction)."""

    def run(numbers: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in numbers:
            for number in batch.column(0).to_pylist():
                rng = ranges[number]
                decoder, stamps = KeylessDecoder(known), Stamps()
                steps: list[Step] = []
                bad: list[BadRecord] = []
                truncates: list[Truncate] = []
                count = tombstones = 0
                for topic, partition, offset, _, value in read_range(conf, rng, stamps=stamps):
                    count += 1
                    item = decoder.steps(topic, partition, offset, value)
                    if item is None:
                        tombstones += 1
                    elif isinstance(item, BadRecord):
                        bad.append(item)
                    elif isinstance(item, Truncate):
                        steps.clear()  # the steps before it are void: the table is emptied
                        truncates.append(item)
                    else:
                        steps += item
                shapes = list(decoder.shapes.values())
                adds = sum(1 for sign, _, _ in steps if sign > 0)
                side.add([(token, number, [*bad, *truncates, *shapes, RangeStats(
                    rng.topic, rng.partition, count, tombstones, len(bad), adds,
                    len(steps) - adds, stamps.newest(cut=False))])])
                if columns is not None and steps and fits(columns, shapes):
                    yield _batch(rng, steps, columns)

    return run


def keyless_source(spark: SparkSession, side: Side, conf: dict[str, str],
                   known: dict[str, dict[str, ColumnSpec]], ranges: list[OffsetRange],
                   columns: list[ColumnSpec] | None) -> tuple[DataFrame, list[object]]:
    """The checkpointed steps of `ranges` for a keyless table with `columns` (None: no
    table yet: shapes only) and the tasks' side results, as `source.read_source` gives."""
    side.value = []
    token = uuid.uuid4().hex
    schema = from_arrow_schema(steps_schema(columns or []))
    numbers = spark.range(0, len(ranges), 1, len(ranges))
    read = SourceRead(_map_in_arrow(numbers, _task(conf, known, ranges, columns, side, token),
                                    schema), side, token, len(ranges))
    return read.frame.localCheckpoint(), read.meta()


def _truncate(value: bytes) -> bool:
    """Whether a record is a truncate (null-keyed whatever the table's key)."""
    try:
        payload, _ = _value(value)
    except DecodeError:
        return False
    return payload is not None and payload.get("op") == TRUNCATE


def null_keyed(conf: dict[str, str], ranges: list[OffsetRange]) -> bool:
    """Whether the first change record of `ranges` has a null Kafka key (a table without a
    primary key): read on the driver, only while the table does not exist yet."""
    for rng in ranges:
        records = cast(Generator[RawRecord, None, None], read_range(conf, rng))
        try:
            for _, _, _, key, value in records:
                if value is not None and not _truncate(value):
                    return key is None
        finally:
            records.close()
    return False


def net_sql(steps: str, state: TableState) -> str:
    """Per row value of the batch: its steps' sum (`total`) and lowest running sum, at most
    0 (`low`), the steps taken in topic order (partition, then offset)."""
    listed = ", ".join(quote(c.name) for c in state.columns)
    sign = f"IF({OP_COLUMN} = '+', 1, -1)"
    return (f"SELECT {listed}, SUM(step) AS total, LEAST(0, MIN(run)) AS low FROM (SELECT "
            f"{listed}, {sign} AS step, SUM({sign}) OVER (PARTITION BY {listed} ORDER BY "
            f"{PART_COLUMN}, {SEQ_COLUMN} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) "
            f"AS run FROM {steps}) GROUP BY {listed}")


def plan_sql(target: str, net: str, state: TableState) -> str:
    """Per row value: the copies the table has (`have`, counted only where the batch may
    delete one) and must have (`want`); rows `d` delete every copy, rows `i` insert one."""
    cols = [quote(c.name) for c in state.columns]
    listed = ", ".join(cols)
    same = " AND ".join(f"a.{c} <=> b.{c}" for c in cols)
    mine = ", ".join("a." + c for c in cols)
    return (
        f"WITH have AS (SELECT {mine}, COUNT(*) AS n FROM {target} a LEFT SEMI JOIN "
        f"(SELECT * FROM {net} WHERE low < 0) b ON {same} GROUP BY {mine}), "
        f"plan AS (SELECT {', '.join('b.' + c for c in cols)}, COALESCE(a.n, 0) AS have, "
        f"GREATEST(COALESCE(a.n, 0) + b.total, b.total - b.low) AS want "
        f"FROM {net} b LEFT JOIN have a ON {same}) "
        f"SELECT {listed}, 'd' AS {OP_COLUMN} FROM plan WHERE want < have "
        f"UNION ALL SELECT {listed}, 'i' AS {OP_COLUMN} FROM plan "
        f"LATERAL VIEW explode(sequence(1, IF(want < have, want, want - have))) copies AS k "
        f"WHERE IF(want < have, want, want - have) > 0")


def merge_sql(target: str, plan: str, state: TableState) -> str:
    """`d` rows delete every copy of their value; `i` rows (never matched) insert."""
    cols = [quote(c.name) for c in state.columns]
    same = " AND ".join(f"t.{c} <=> s.{c}" for c in cols)
    return (f"MERGE INTO {target} t USING {plan} s ON s.{OP_COLUMN} = 'd' AND {same} "
            f"WHEN MATCHED THEN DELETE "
            f"WHEN NOT MATCHED AND s.{OP_COLUMN} = 'i' THEN INSERT ({', '.join(cols)}) "
            f"VALUES ({', '.join('s.' + c for c in cols)})")


def merge_keyless(spark: SparkSession, state: TableState, steps: DataFrame, view: str) -> None:
    """Apply the batch's steps to the keyless table in one MERGE (one commit). The per-value
    results are checkpointed (one row per value): inlined, Spark computes them, and counts
    the table's copies, once per use (its plan shows the table scanned three times)."""
    steps.createOrReplaceTempView(view)
    net, plan = view + "_net", view + "_plan"
    try:
        spark.sql(net_sql(view, state)).localCheckpoint().createOrReplaceTempView(net)
        spark.sql(plan_sql(state.ref.sql, net, state)).localCheckpoint() \
            .createOrReplaceTempView(plan)
        spark.sql(merge_sql(state.ref.sql, plan, state))
    finally:
        for name in (plan, net, view):
            spark.catalog.dropTempView(name)
