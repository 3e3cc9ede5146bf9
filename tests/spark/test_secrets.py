"""Catalog secrets from a settings file named in the environment: they reach the Iceberg
catalog, and neither the job's processes' arguments (Python, spark-submit's JVM) nor its
logs show them."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from connector.schema import Column, TableSchema
from spark_consumer.job.options import CATALOG_CONFIG_ENV, parse_options
from spark_consumer.job.secrets import Redactor, secret_values
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.spark.cluster import cmdline, descendants
from tests.spark.events import Changes

pytestmark = pytest.mark.spark

ITEMS = TableSchema("app", "items", (Column("id", "bigint", nullable=False),
                                     Column("v", "bigint")), ("id",))


def command_lines(root: int) -> list[str]:
    """The command line of `root` and of every live descendant, as ps shows them."""
    return [" ".join(cmdline(pid)) for pid in [root, *descendants(root)]]


def test_catalog_secret_from_env_named_file_reaches_catalog_not_ps_or_logs(
        broker: Broker, unique_name: str, tmp_path: Path) -> None:
    changes = Changes(ITEMS, unique_name)
    create_topic(broker.bootstrap, changes.topic, 1)
    produce(broker.bootstrap, changes.topic,
            [changes.upsert("c", {"id": i, "v": i}) for i in range(3)])
    secret = "s3cr3t-" + uuid.uuid4().hex
    warehouse = tmp_path / "warehouse"
    settings = tmp_path / "catalog.properties"
    # table-default.* is a catalog setting Iceberg copies into the tables it creates: the
    # only way to see from outside that the file's values reached the catalog.
    settings.write_text(f"type=hadoop\nwarehouse={warehouse}\n"
                        f"table-default.gtidmark.test-token={secret}\n")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable,
               **{CATALOG_CONFIG_ENV: str(settings)})
    log = tmp_path / "spark-apply.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "spark_consumer", "--bootstrap-servers", broker.bootstrap,
             "--topics", changes.topic, "--namespace", unique_name, "--once",
             "--log-level", "DEBUG", "--dead-letter", str(tmp_path / "dl.jsonl")],
            cwd=tmp_path, env=env, stdout=sink, stderr=subprocess.STDOUT)
    seen: list[str] = []
    try:
        while True:  # the command lines, sampled for as long as the processes live
            seen += command_lines(proc.pid)
            try:
                proc.wait(0.1)
                break
            except subprocess.TimeoutExpired:
                continue
    finally:
        if proc.poll() is None:
            proc.kill()
    err = log.read_text()
    assert proc.returncode == 0, err[-3000:]
    assert "caught up" in err
    assert any("SparkSubmit" in line for line in seen), "the JVM was never sampled"
    assert [line for line in seen if secret in line] == []
    assert secret not in err
    metadata = sorted((warehouse / unique_name / "items" / "metadata").glob("*.metadata.json"))
    properties = json.loads(metadata[-1].read_text())["properties"]
    assert properties["gtidmark.test-token"] == secret


def test_catalog_flag_overrides_file_and_options_repr_hides_secrets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = tmp_path / "catalog.json"
    settings.write_text(json.dumps({"type": "rest", "credential": "id:verysecret"}))
    monkeypatch.setenv(CATALOG_CONFIG_ENV, str(settings))
    opts = parse_options(["--topics", "t", "--bootstrap-servers", "b",
                          "--catalog-conf", "uri=http://catalog"])
    assert opts.catalog_conf == {"type": "rest", "credential": "id:verysecret",
                                 "uri": "http://catalog"}
    assert "verysecret" not in repr(opts)
    assert secret_values(opts.catalog_conf) == ["id:verysecret"]


def test_redactor_masks_secret_values_in_messages_and_tracebacks() -> None:
    redactor = Redactor(["hunter22"])
    try:
        raise ValueError("login hunter22 refused")
    except ValueError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "password %s", ("hunter22",),
                                   sys.exc_info())
    redactor.filter(record)
    text = logging.Formatter().format(record)
    assert "hunter22" not in text
    assert "password ***" in text and "login *** refused" in text
