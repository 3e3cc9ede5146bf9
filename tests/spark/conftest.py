"""One SparkSession (with the Iceberg catalog `gtidmark`) for every Spark test of the session."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from spark_consumer.job.options import JobOptions
from spark_consumer.job.session import build_session


@pytest.fixture(scope="session")
def spark_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spark-warehouse")


@pytest.fixture(scope="session")
def spark(spark_warehouse: Path) -> Iterator[SparkSession]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    opts = JobOptions(bootstrap_servers="unused", topics=["unused"], topic_pattern=None,
                      warehouse=str(spark_warehouse),
                      spark_conf={"spark.sql.catalog.gtidmark.cache-enabled": "false"})
    session = build_session(opts)
    yield session
    session.stop()
