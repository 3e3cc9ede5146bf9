"""The Spark reader's (`--kafka-reader spark`) conversions give the Python decoder's values.

Run on Spark 3.5 and 4.1 (`make test`): Spark 4 turns ANSI mode on, where a cast that cannot
convert throws and `timestamp_micros` refuses a double.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from spark_consumer.decoding.dbztypes import (
    DATE_DAYS,
    TS_ISO,
    TS_MICROS,
    TS_MILLIS,
    TS_NANOS,
    ColumnSpec,
)
from spark_consumer.reading.jvmsource import _converted, _raw_type

pytestmark = pytest.mark.spark

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
# 1704481356661392000 ns: as a double divided by 1000 it is 1704481356661391.9..., one
# microsecond short of the integer quotient.
VALUES: dict[str, list[Any]] = {
    TS_NANOS: [1704481356661392000, 1704481356661392999, -1500, 0],
    TS_MICROS: [1704481356661392, -1],
    TS_MILLIS: [1704481356661, -1],
    DATE_DAYS: [19727, -1],
    TS_ISO: ["2024-01-05T19:02:36.661392Z", "2024-01-05T21:02:36+02:00", "1969-12-31T23:59:59Z"],
}


def jvm_values(spark: SparkSession, spec: ColumnSpec, values: list[Any]) -> list[Any]:
    """`values` parsed as the JSON reader parses them, converted in the JVM; timestamps as
    microseconds and dates as days since the epoch."""
    frame = spark.createDataFrame([(v,) for v in values], f"raw {_raw_type(spec).simpleString()}")
    out: Column = _converted(F.col("raw"), spec)
    out = F.unix_date(out) if spec.spark_type == "date" else F.unix_micros(out)
    return [row[0] for row in frame.select(out).collect()]


def python_values(spec: ColumnSpec, values: list[Any]) -> list[Any]:
    out = []
    for value in values:
        got = spec.convert(value)
        out.append((got - dt.date(1970, 1, 1)).days if spec.spark_type == "date"
                   else (got - EPOCH) // dt.timedelta(microseconds=1))
    return out


@pytest.mark.parametrize("conversion", sorted(VALUES))
def test_the_jvm_conversion_gives_the_python_decoders_value(spark: SparkSession,
                                                            conversion: str) -> None:
    spec = ColumnSpec("c", "date" if conversion == DATE_DAYS else "timestamp", conversion)
    assert jvm_values(spark, spec, VALUES[conversion]) == python_values(spec,
                                                                        VALUES[conversion])


def test_an_iso_text_spark_does_not_read_converts_to_null_not_an_error(
        spark: SparkSession) -> None:
    """Null is what the Spark reader's guard turns into a misfit (the batch then takes the
    Python path, which dead-letters the record); ANSI mode's cast threw instead."""
    spec = ColumnSpec("c", "timestamp", TS_ISO)
    assert jvm_values(spark, spec, ["not a time", None]) == [None, None]
