"""One MERGE INTO per table and micro-batch: deletes and upserts of the latest change per key.

The source is built on the driver from the tasks' `Part`s: each part becomes Arrow record
batches of exactly the table's columns (absent columns null, narrower types widened).
"""

from __future__ import annotations

import datetime as dt
import pickle
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession

from spark_consumer.arrowframe import arrow_frame
from spark_consumer.arrowtypes import arrow_type
from spark_consumer.columnar import OP_COLUMN, from_ipc
from spark_consumer.dbztypes import ColumnSpec
from spark_consumer.decode import Change
from spark_consumer.reader import Part
from spark_consumer.tables import TableState, quote


def _fit(value: Any, spark_type: str) -> Any:
    """Small coercions so a value typed by an older/newer event fits the table column."""
    if value is None:
        return None
    if spark_type in ("float", "double") and isinstance(value, (int, Decimal)):
        return float(value)
    if spark_type.startswith("decimal") and isinstance(value, (int, float)):
        return Decimal(str(value))
    if spark_type == "timestamp" and isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    if spark_type == "string" and not isinstance(value, str):
        return str(value)
    return value


def _schema(columns: list[ColumnSpec]) -> pa.Schema:
    return pa.schema([(OP_COLUMN, pa.string())]
                     + [(c.name, arrow_type(c.spark_type)) for c in columns])


def _from_rows(changes: list[Change], schema: pa.Schema,
               columns: list[ColumnSpec]) -> pa.RecordBatch:
    """Row-decoded changes -> (op, col1, col2, ...) in table column order; absent is null."""
    arrays = [pa.array([c.op for c in changes], pa.string())]
    arrays += [pa.array([_fit(c.row.get(col.name), col.spark_type) for c in changes],
                        schema.field(i + 1).type) for i, col in enumerate(columns)]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _conform(table: pa.Table, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """A columnar part with the table's columns: missing ones null, narrower ones cast."""
    arrays = []
    for target in schema:
        if target.name in table.column_names:
            have = table.column(target.name)
            arrays.append(have if have.type == target.type else have.cast(target.type))
        else:
            arrays.append(pa.nulls(table.num_rows, target.type))
    yield from pa.Table.from_arrays(arrays, schema=schema).to_batches()


def source_batches(parts: list[Part], columns: list[ColumnSpec],
                   slices: int) -> list[pa.RecordBatch]:
    """The parts as record batches of the table's columns, in about `slices` equal batches."""
    schema = _schema(columns)
    tables = []
    for part in parts:
        if part.columnar:
            tables.append(pa.Table.from_batches(_conform(from_ipc(part.blob), schema), schema))
        else:
            tables.append(pa.Table.from_batches([_from_rows(pickle.loads(part.blob), schema,
                                                            columns)]))
    whole = pa.concat_tables(tables).combine_chunks() if tables else schema.empty_table()
    batches: list[pa.RecordBatch] = whole.to_batches(
        max_chunksize=max(1, -(-whole.num_rows // max(1, slices))))
    return batches


def merge_sql(target: str, source: str, state: TableState) -> str:
    """MERGE INTO: `d` deletes, other ops upsert every column; deletes of absent keys no-op."""
    on = " AND ".join(f"t.{quote(k)} = s.{quote(k)}" for k in state.key_columns)
    cols = [quote(c.name) for c in state.columns]
    sets = ", ".join(f"t.{c} = s.{c}" for c in cols)
    return (f"MERGE INTO {target} t USING {source} s ON {on} "
            f"WHEN MATCHED AND s.{OP_COLUMN} = 'd' THEN DELETE "
            f"WHEN MATCHED THEN UPDATE SET {sets} "
            f"WHEN NOT MATCHED AND s.{OP_COLUMN} <> 'd' THEN INSERT ({', '.join(cols)}) "
            f"VALUES ({', '.join('s.' + c for c in cols)})")


def merge_changes(spark: SparkSession, state: TableState, parts: list[Part], view: str) -> None:
    """Run the MERGE of the changes in `parts` (already one per key) into `state`'s table.

    The source is checkpointed first (measured: cheaper than reading the Arrow batches again
    for each of MERGE's scans of its source, and than caching them).
    """
    batches = source_batches(parts, state.columns, spark.sparkContext.defaultParallelism)
    frame = arrow_frame(spark, batches, _schema(state.columns)).localCheckpoint()
    frame.createOrReplaceTempView(view)
    try:
        spark.sql(merge_sql(state.ref.sql, view, state))
    finally:
        spark.catalog.dropTempView(view)
