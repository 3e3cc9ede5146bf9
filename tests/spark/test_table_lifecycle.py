"""The Iceberg table's own lifecycle: compaction and other writers, recreated topics, widened
columns, topics with nothing applicable, hostile column names (real broker, real Spark)."""

from __future__ import annotations

import datetime as dt
import json
import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient
from pyspark.sql import SparkSession

from connector.events import EventEncoder
from connector.schema import Column, TableSchema
from spark_consumer.iceberg.offsets import table_offsets
from spark_consumer.job import main as apply
from spark_consumer.job.batch import Job
from spark_consumer.job.main import main, run
from spark_consumer.job.options import JobOptions
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.services import wait_for
from tests.spark.events import Changes, connector_config
from tests.spark.helpers import apply_once, table_rows, topic_ends

pytestmark = pytest.mark.spark

ACCOUNTS = TableSchema("bank", "accounts", (
    Column("id", "int", nullable=False), Column("owner", "varchar", length=20),
    Column("balance", "decimal", precision=12, scale=2)), ("id",))


def delete_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.delete_topics([topic]).values():
        future.result(10)
    wait_for(lambda: topic not in admin.list_topics(timeout=5).topics, 30,
             f"topic {topic} to be deleted")


def account(id_: int, version: int) -> dict[str, Any]:
    return {"id": id_, "owner": f"o{id_}v{version}",
            "balance": Decimal(id_ * 1000 - version * 7) / 100 - Decimal(50)}


def args(broker: Broker, spark: SparkSession, topics: list[str], namespace: str,
         tmp_path: Path) -> list[str]:
    warehouse = spark.conf.get("spark.sql.catalog.gtidmark.warehouse") or ""
    return ["--bootstrap-servers", broker.bootstrap, "--topics", ",".join(topics),
            "--warehouse", warehouse, "--namespace", namespace, "--once",
            "--dead-letter", str(tmp_path / "dl.jsonl")]


def test_compaction_and_a_manual_delete_do_not_send_the_job_back_to_offset_0(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    changes = Changes(ACCOUNTS, unique_name)
    topic, table = changes.topic, f"gtidmark.{unique_name}.accounts"
    create_topic(broker.bootstrap, topic, 2)
    model = {i: account(i, 0) for i in range(60)}
    produce(broker.bootstrap, topic, [changes.upsert("c", row) for row in model.values()])
    apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)
    items = []
    for i in range(0, 60, 3):  # updates and deletes: merge-on-read delete files to compact
        model[i] = account(i, 1)
        items.append(changes.upsert("u", model[i]))
    for i in range(1, 60, 5):
        items += changes.delete(model.pop(i))
    produce(broker.bootstrap, topic, items)
    apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)
    committed = table_offsets(spark, table)
    assert committed == {topic: topic_ends(broker.bootstrap, topic, 2)}

    name = f"{unique_name}.accounts"
    spark.sql(f"CALL gtidmark.system.rewrite_position_delete_files(table => '{name}', "
              f"options => map('rewrite-all', 'true'))").collect()
    spark.sql(f"CALL gtidmark.system.rewrite_data_files(table => '{name}', "
              f"options => map('rewrite-all', 'true'))").collect()
    spark.sql(f"DELETE FROM {table} WHERE id = 2")  # another writer: never changed again
    del model[2]
    snapshots = spark.sql(f"SELECT operation, summary['gtidmark.offsets'] AS offsets "
                          f"FROM {table}.snapshots ORDER BY committed_at").collect()
    foreign = [r["operation"] for r in snapshots[-3:] if r["offsets"] is None]
    assert foreign[:2] == ["replace", "replace"] and len(foreign) == 3, snapshots

    later = [changes.upsert("u", account(i, 2)) for i in (0, 3, 4)]
    model.update({i: account(i, 2) for i in (0, 3, 4)})
    produce(broker.bootstrap, topic, later)
    job = Job(spark, JobOptions(bootstrap_servers=broker.bootstrap, topics=[topic],
                                topic_pattern=None, namespace=unique_name, once=True,
                                dead_letter=str(tmp_path / "dl.jsonl")))
    ranges, _ = job.plan(None)
    assert {(r.topic, r.partition): r.start for r in ranges} == {
        (topic, p): o for p, o in committed[topic].items()}, "re-applied from offset 0"
    assert sum(r.size for r in ranges) == len(later)
    run(job)
    assert table_rows(spark, table) == [model[k] for k in sorted(model)]
    assert table_offsets(spark, table) == {topic: topic_ends(broker.bootstrap, topic, 2)}


def test_a_recreated_topic_stops_the_job_and_restart_topics_reads_it_from_the_start(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    changes = Changes(ACCOUNTS, unique_name)
    topic, table = changes.topic, f"gtidmark.{unique_name}.accounts"
    create_topic(broker.bootstrap, topic, 1)
    produce(broker.bootstrap, topic, [changes.upsert("c", account(i, 0)) for i in range(20)])
    apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)

    delete_topic(broker.bootstrap, topic)
    create_topic(broker.bootstrap, topic, 1)
    # The new topic has more records than the old one: offsets alone cannot tell.
    fresh = [changes.upsert("c", account(i, 5)) for i in range(100, 125)]
    produce(broker.bootstrap, topic, fresh)
    capsys.readouterr()
    argv = args(broker, spark, [topic], unique_name, tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "topic id changed" in err
    assert f"--restart-topics {topic}" in err
    assert len(table_rows(spark, table)) == 20  # nothing read from the old offset

    assert main([*argv, "--restart-topics", topic]) == 0
    expected = [account(i, 0) for i in range(20)] + [account(i, 5) for i in range(100, 125)]
    assert table_rows(spark, table) == expected
    assert table_offsets(spark, table) == {topic: {0: 25}}


def test_widened_columns_are_promoted_and_a_larger_scale_stops_the_job(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    def schema(int_type: str, float_type: str, precision: int, scale: int) -> TableSchema:
        return TableSchema("app", "meters", (
            Column("id", "int", nullable=False), Column("n", int_type),
            Column("f", float_type), Column("d", "decimal", precision=precision, scale=scale)),
            ("id",))

    narrow = Changes(schema("int", "float", 6, 2), unique_name)
    wide = Changes(schema("bigint", "double", 14, 2), unique_name)
    topic, table = narrow.topic, f"gtidmark.{unique_name}.meters"
    create_topic(broker.bootstrap, topic, 1)
    produce(broker.bootstrap, topic, [narrow.upsert("c", {"id": 1, "n": 7, "f": 1.5,
                                                          "d": Decimal("-9999.99")})])
    apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)
    big = {"id": 2, "n": 2**40 + 1, "f": 0.1, "d": Decimal("-123456789012.34")}
    produce(broker.bootstrap, topic, [wide.upsert("c", big)])
    job = apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)
    assert job.dead_letters == 0
    assert {f.name: f.dataType.simpleString() for f in spark.table(table).schema} == {
        "id": "int", "n": "bigint", "f": "double", "d": "decimal(14,2)"}
    assert table_rows(spark, table) == [
        {"id": 1, "n": 7, "f": 1.5, "d": Decimal("-9999.99")}, big]

    finer = Changes(schema("bigint", "double", 14, 3), unique_name)
    produce(broker.bootstrap, topic, [finer.upsert("c", {"id": 3, "n": 1, "f": 1.0,
                                                         "d": Decimal("0.125")})])
    capsys.readouterr()
    assert main(args(broker, spark, [topic], unique_name, tmp_path)) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert f"table {table} column d: type changed from decimal(14,2) to decimal(14,3)" in err
    assert len(table_rows(spark, table)) == 2  # nothing rounded into the table


def test_topics_with_no_applicable_record_advance_and_once_ends(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    encoder = EventEncoder(connector_config(unique_name, True,
                                            **{"provide.transaction.metadata": "true"}))
    tx_topic = encoder.config.transaction_topic
    no_pk = Changes(TableSchema("app", "log", (Column("line", "varchar", length=20),), ()),
                    unique_name)
    topics = [tx_topic, no_pk.topic]
    for topic in topics:
        create_topic(broker.bootstrap, topic, 1)
    produce(broker.bootstrap, tx_topic, [
        encoder.transaction(status, f"0-1-{n}", 0, 1, {"app.log": 1})[1:]
        for n in range(5) for status in ("BEGIN", "END")])
    produce(broker.bootstrap, no_pk.topic, [no_pk.upsert("c", {"line": f"l{n}"})
                                            for n in range(7)])
    job = Job(spark, JobOptions(bootstrap_servers=broker.bootstrap, topics=topics,
                                topic_pattern=None, namespace=unique_name, once=True,
                                dead_letter=str(tmp_path / "dl.jsonl")))
    runner = threading.Thread(target=run, args=(job,), daemon=True)
    runner.start()
    runner.join(180)
    if runner.is_alive():
        apply._stop = True  # end the loop before failing, or it runs on forever
        runner.join(120)
        apply._stop = False
        pytest.fail("--once did not end: a topic with only bad records never advanced")
    assert job.dead_letters == 10
    reasons = {json.loads(line)["reason"].split(" (")[0].split(":")[0]
               for line in (tmp_path / "dl.jsonl").read_text().splitlines()}
    assert reasons == {"unknown op None"}
    # the table without a primary key is applied by whole-row match (spark_consumer/keyless)
    assert spark.table(f"gtidmark.{unique_name}.log").count() == 7


def test_a_hostile_column_name_cannot_redirect_the_data_files(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    evil = tmp_path / "evil"
    hostile = f"a', 'write.data.path'='{evil}', 'x'='"
    schema = TableSchema("app", "victims", (Column("id", "int", nullable=False),
                                            Column(hostile, "date")), ("id",))
    changes = Changes(schema, unique_name)
    create_topic(broker.bootstrap, changes.topic, 1)
    produce(broker.bootstrap, changes.topic,
            [changes.upsert("c", {"id": 1, hostile: dt.date(2024, 2, 29)})])
    job = apply_once(spark, broker.bootstrap, [changes.topic], unique_name, tmp_path)
    assert job.dead_letters == 0
    table = f"gtidmark.{unique_name}.victims"
    props = {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {table}").collect()}
    assert "write.data.path" not in props and "x" not in props
    assert json.loads(props["gtidmark.conversions"]) == {hostile: "date_days"}
    assert not evil.exists()
    assert table_rows(spark, table) == [{"id": 1, hostile: dt.date(2024, 2, 29)}]


def test_two_topics_for_one_table_exit_2_naming_both(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    topics = [f"{unique_name}.shop.orders", f"{unique_name}.shop2.orders"]
    assert main(args(broker, spark, topics, "one", tmp_path)) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"error: topics {topics[0]} and {topics[1]} would both be applied to table "
                   f"gtidmark.one.orders; use another --namespace or run one job per topic "
                   f"prefix")


def test_expired_offset_snapshots_stop_the_job_instead_of_restarting_from_0(
        spark: SparkSession, broker: Broker, unique_name: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    changes = Changes(ACCOUNTS, unique_name)
    topic, table = changes.topic, f"gtidmark.{unique_name}.accounts"
    create_topic(broker.bootstrap, topic, 1)
    produce(broker.bootstrap, topic, [changes.upsert("c", account(i, 0)) for i in range(5)])
    apply_once(spark, broker.bootstrap, [topic], unique_name, tmp_path)
    spark.sql(f"DELETE FROM {table} WHERE id = 1")  # a foreign commit, then expiry
    spark.sql(f"CALL gtidmark.system.expire_snapshots(table => '{unique_name}.accounts', "
              f"older_than => TIMESTAMP '9999-01-01 00:00:00', retain_last => 1)").collect()
    capsys.readouterr()
    assert main(args(broker, spark, [topic], unique_name, tmp_path)) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no snapshot left in its history carries" in err
    assert len(table_rows(spark, table)) == 4  # not re-applied from offset 0
