"""One SparkSession (with the Iceberg catalog `gtidmark`) for every Spark test of the session.

`make test` runs the job's own tests a second time in the Spark 4 virtualenv with
GTIDMARK_SPARK_LINE set: a session on any other Spark line fails them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_consumer.jars import spark_line
from spark_consumer.job.options import JobOptions
from spark_consumer.job.session import build_session


@pytest.fixture(scope="session")
def spark_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spark-warehouse")


@pytest.fixture(scope="session")
def spark(spark_warehouse: Path) -> Iterator[SparkSession]:
    wanted = os.environ.get("GTIDMARK_SPARK_LINE")
    if wanted and spark_line() != wanted:
        pytest.fail(f"GTIDMARK_SPARK_LINE={wanted}, but this Python ({sys.executable}) has "
                    f"pyspark {spark_line()}", pytrace=False)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    opts = JobOptions(bootstrap_servers="unused", topics=["unused"], topic_pattern=None,
                      warehouse=str(spark_warehouse),
                      spark_conf={"spark.sql.catalog.gtidmark.cache-enabled": "false"})
    session = build_session(opts)
    yield session
    session.stop()
