"""The job on a standalone cluster, submitted as the README says, applies exactly once through
an executor SIGKILLed mid-task and the driver SIGKILLed between a MERGE's files and its commit.

The executors' Python is a separate virtualenv built from the README's requirements alone,
so anything the executors import that the README does not ship fails here.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from tests.connector_tools import connector_document, source_rows, streaming_connector
from tests.integration.test_streaming import as_int64, wait_caught_up
from tests.kafka_services import Broker
from tests.services import MariaDbPair, wait_for
from tests.spark.cluster import Executor, StandaloneCluster
from tests.spark.cluster_procedure import (
    Procedure,
    readme_procedure,
    run_setup,
    shell_env,
    start_submit,
)
from tests.spark.test_end_to_end import iceberg_rows
from tests.workload import TABLES, synced_workload

pytestmark = pytest.mark.spark

MAX_OFFSETS = 700  # offsets per batch: four batches of the workload below


@dataclass
class ClusterSetup:
    """The running cluster and the README's procedure, set up in `workdir` (dist/ there)."""

    cluster: StandaloneCluster
    procedure: Procedure
    workdir: Path
    executor_env: Path

    def env(self, **values: str) -> dict[str, str]:
        settings = {"SPARK_MASTER": self.cluster.url, "EXECUTOR_ENV": str(self.executor_env),
                    **values}
        assert set(settings) == set(self.procedure.settings), "the README's settings"
        return shell_env(settings)


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterSetup]:
    """A Master and two Workers; meanwhile the README's setup commands (code zip, executor
    virtualenv) run in a directory of their own."""
    base = tmp_path_factory.mktemp("spark-cluster")
    cluster = StandaloneCluster(base)
    try:
        cluster.launch()
        setup = ClusterSetup(cluster, readme_procedure(), base / "submit", base / "executor-env")
        setup.workdir.mkdir()
        env = setup.env(KAFKA="", TOPICS="", WAREHOUSE="", MAX_OFFSETS="")
        run_setup(setup.procedure, setup.workdir, env)
        cluster.wait_ready()
        yield setup
    finally:
        cluster.stop()


def wait_log(proc: subprocess.Popen[bytes], log: Path, pattern: str, timeout: float) -> None:
    def seen() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"spark-submit exited {proc.returncode}: "
                                 f"{log.read_text(errors='replace')[-3000:]}")
        return re.search(pattern, log.read_text(errors="replace")) is not None
    wait_for(seen, timeout, f"{pattern!r} in {log.name}")


def kill_executor_mid_task(cluster: StandaloneCluster, timeout: float) -> tuple[Executor, list[
        list[str]]]:
    """SIGKILL an executor that runs Python and has a task running: frozen first (SIGSTOP)
    and its log read to the end, so the log proves the task had not finished (an executor
    logs "Finished task" before it tells the driver); returns it and its Python processes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for executor in cluster.executors():
            pythons = executor.python_workers()
            if not pythons or not executor.running_tasks():
                continue
            os.kill(executor.pid, signal.SIGSTOP)
            wait_for(lambda e=executor: e.unread_output() == 0, 10,
                     "the Worker to copy the frozen executor's log lines")
            if executor.running_tasks():
                os.kill(executor.pid, signal.SIGKILL)
                return executor, pythons
            os.kill(executor.pid, signal.SIGCONT)
        time.sleep(0.02)
    raise AssertionError("no executor ran a Python task to kill")


def table_files(table: Path) -> tuple[int, set[Path]]:
    """(number of committed metadata versions, data and delete files) of a Hadoop table."""
    versions = len(list((table / "metadata").glob("v*.metadata.json")))
    return versions, set((table / "data").rglob("*.parquet"))


def kill_driver_mid_commit(proc: subprocess.Popen[bytes], tables: list[Path],
                           timeout: float) -> tuple[Path, int]:
    """SIGKILL the driver's process group once a MERGE wrote files its table has not
    committed yet, checked with the driver frozen; returns the table and those files."""
    seen = {table: table_files(table) for table in tables}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the job ended before a commit could be interrupted"
        for table in tables:
            versions, files = table_files(table)
            if versions != seen[table][0]:  # committed: the next MERGE's files count
                seen[table] = (versions, files)
                continue
            written = files - seen[table][1]
            if not written:
                continue
            os.killpg(proc.pid, signal.SIGSTOP)
            if table_files(table)[0] == versions:
                os.killpg(proc.pid, signal.SIGKILL)
                return table, len(written)
            os.killpg(proc.pid, signal.SIGCONT)
            seen[table] = table_files(table)
        time.sleep(0.02)
    raise AssertionError("no MERGE was caught between its files and its commit")


def test_cluster_job_killed_executor_and_driver_mid_commit_rerun_equals_the_primary(
        spark_cluster: ClusterSetup, spark: SparkSession, mariadb: MariaDbPair,
        broker: Broker, spark_warehouse: Path, unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    workload = synced_workload(mariadb, db, seed=23)
    doc = connector_document(mariadb, broker, db, topic__creation__default__partitions="2")
    with streaming_connector(doc, tmp_path) as conn:
        workload.run(2000, add_column_at=None)
        workload.close()
        wait_caught_up(mariadb, broker, doc)
        assert conn.stop() == 0

    env = spark_cluster.env(KAFKA=broker.bootstrap, TOPICS=rf"{db}\.{db}\..+",
                            WAREHOUSE=str(spark_warehouse), MAX_OFFSETS=str(MAX_OFFSETS))
    procedure, workdir = spark_cluster.procedure, spark_cluster.workdir
    first_log = tmp_path / "submit-1.log"
    first = start_submit(procedure, workdir, env, first_log)
    try:
        # 240 s: Spark 4.1's cold driver and executors on two loaded cores took over 120 s
        # to their first Python task, and again from the executor's loss to the first batch
        executor, pythons = kill_executor_mid_task(spark_cluster.cluster, timeout=240)
        executor_python = str(spark_cluster.executor_env / "bin" / "python")
        assert pythons and all(line[0] == executor_python for line in pythons), pythons
        wait_log(first, first_log, rf"executor {executor.executor_id}\): ExecutorLostFailure",
                 timeout=60)
        wait_log(first, first_log, r"batch \d+: read", timeout=240)
        tables = [spark_warehouse / db / table for table in TABLES]
        table, uncommitted = kill_driver_mid_commit(first, tables, timeout=120)
        assert first.wait(30) == -signal.SIGKILL
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(30)

    second_log = tmp_path / "submit-2.log"
    second = start_submit(procedure, workdir, env, second_log)
    try:
        assert second.wait(300) == 0, second_log.read_text(errors="replace")[-3000:]
    finally:
        if second.poll() is None:
            os.killpg(second.pid, signal.SIGKILL)
            second.wait(30)
    assert "caught up" in second_log.read_text(errors="replace")

    compared = 0
    for name, (_, key) in TABLES.items():
        expected = source_rows(mariadb, db, name, key)
        if name == "orders":  # BIGINT UNSIGNED is int64 on the wire: two's complement
            for row in expected.values():
                row["flags"] = as_int64(row["flags"])
        assert iceberg_rows(spark, f"gtidmark.{db}.{name}", key) == expected, name
        compared += len(expected)
    assert compared > 500 and uncommitted > 0, (compared, table, uncommitted)
