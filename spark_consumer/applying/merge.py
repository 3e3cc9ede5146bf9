"""One MERGE INTO per table and micro-batch: deletes and upserts of the latest change per key."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from spark_consumer.applying.keyless import merge_keyless
from spark_consumer.decoding.columnar import OP_COLUMN
from spark_consumer.iceberg.tables import TableState, quote


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


def merge_changes(spark: SparkSession, state: TableState, source: DataFrame, view: str) -> None:
    """Run the MERGE of `source` (one change per key, the table's columns) into `state`'s table;
    a table without key columns takes its steps by whole-row match (`keyless`)."""
    if not state.key_columns:
        merge_keyless(spark, state, source, view)
        return
    source.createOrReplaceTempView(view)
    try:
        spark.sql(merge_sql(state.ref.sql, view, state))
    finally:
        spark.catalog.dropTempView(view)
