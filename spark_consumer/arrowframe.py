"""A DataFrame from Arrow record batches held by the driver, without pandas.

The same JVM entry points Spark 3.5's `createDataFrame(pandas_df)` uses: the batches go to
the JVM as one Arrow stream and are read there column by column, with no Python row objects.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.serializers import ArrowStreamSerializer
from pyspark.sql.pandas.types import from_arrow_schema


def arrow_frame(spark: SparkSession, batches: list[pa.RecordBatch],
                schema: pa.Schema) -> DataFrame:
    """One partition per batch; `schema` is the batches' Arrow schema (Spark types from it)."""
    jvm: Any = spark._jvm
    sc: Any = spark.sparkContext

    def reader(path: str) -> Any:
        return jvm.PythonSQLUtils.readArrowStreamFromFile(path)

    def server() -> Any:
        return jvm.ArrowIteratorServer()

    stream = batches or [pa.RecordBatch.from_pylist([], schema=schema)]
    jrdd = sc._serialize_to_jvm(stream, ArrowStreamSerializer(), reader, server)
    struct = from_arrow_schema(schema)
    return DataFrame(jvm.PythonSQLUtils.toDataFrame(jrdd, struct.json(), spark._jsparkSession),
                     spark)
