"""One MERGE INTO per table and micro-batch: deletes and upserts of the latest change per key."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from pyspark import RDD
from pyspark.sql import SparkSession

from spark_consumer.dbztypes import ColumnSpec
from spark_consumer.decode import Change
from spark_consumer.tables import TableState, quote

OP_COLUMN = "__gtidmark_op"


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


def projector(columns: list[ColumnSpec]) -> Callable[[Change], tuple[Any, ...]]:
    """Change -> (op, col1, col2, ...) in table column order; absent columns are null."""
    names = [(c.name, c.spark_type) for c in columns]

    def project(change: Change) -> tuple[Any, ...]:
        row = change.row
        return (change.op, *[_fit(row.get(n), t) for n, t in names])

    return project


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


def merge_changes(spark: SparkSession, state: TableState, changes: RDD[Change],
                  view: str) -> None:
    """Run the MERGE of `changes` (already one per key) into the table of `state`."""
    ddl = ", ".join([f"{OP_COLUMN} string"]
                    + [f"{quote(c.name)} {c.spark_type}" for c in state.columns])
    frame = spark.createDataFrame(changes.map(projector(state.columns)), ddl)
    frame.createOrReplaceTempView(view)
    try:
        spark.sql(merge_sql(state.ref.sql, view, state))
    finally:
        spark.catalog.dropTempView(view)
