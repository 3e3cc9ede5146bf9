"""Pure planning rules: where partitions resume, table collisions, type promotion, options,
when a batch must be read again after evolving its table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_consumer.decoding.dbztypes import ColumnSpec
from spark_consumer.decoding.decode import Shape
from spark_consumer.iceberg.evolution import TypeChangeError, promoted_type
from spark_consumer.iceberg.tables import table_for_topic
from spark_consumer.job.main import main
from spark_consumer.job.options import KAFKA_CONFIG_ENV, parse_options
from spark_consumer.reading.resume import (
    PartitionState,
    TableCollisionError,
    TopicRecreatedError,
    check_collisions,
    resume_offset,
)
from spark_consumer.reading.source import fits

BASE = ["--bootstrap-servers", "k:9092", "--topics", "a.b.c"]


def part(stored: int | None, low: int = 0, end: int = 100, stored_id: str | None = "A",
         current_id: str | None = "A") -> PartitionState:
    return PartitionState("p.db.t", 0, stored, stored_id, current_id, low, end)


def test_a_valid_stored_offset_is_where_the_partition_resumes() -> None:
    assert resume_offset(part(40), restart=False) == 40
    assert resume_offset(part(100), restart=False) == 100
    assert resume_offset(part(None, low=7), restart=False) == 7


@pytest.mark.parametrize("state, reason", [
    (part(40, stored_id="A", current_id="B"), "topic id changed from A to B"),
    (part(140, stored_id=None, current_id=None), "beyond the partition end 100"),
    (part(3, low=10), "below the first offset still in the partition 10"),
])
def test_offsets_of_an_earlier_topic_stop_the_job_with_one_line(
        state: PartitionState, reason: str) -> None:
    with pytest.raises(TopicRecreatedError) as err:
        resume_offset(state, restart=False)
    message = str(err.value)
    assert reason in message and "--restart-topics p.db.t" in message and "\n" not in message
    assert resume_offset(state, restart=True) == state.low


def test_two_topics_for_one_table_are_refused_naming_both() -> None:
    check_collisions([("x.shop.orders", "c.shop.orders"), ("x.shop.items", "c.shop.items")])
    with pytest.raises(TableCollisionError, match="topics x.shop.orders and y.shop.orders"):
        check_collisions([("y.shop.orders", "c.shop.orders"), ("x.shop.orders", "c.shop.orders")])
    namespace = [(t, str(table_for_topic(t, "c", "one"))) for t in ("p.a.users", "p.b.users")]
    with pytest.raises(TableCollisionError, match="p.a.users and p.b.users"):
        check_collisions(namespace)


@pytest.mark.parametrize("current, incoming, result", [
    ("int", "bigint", "bigint"), ("float", "double", "double"),
    ("bigint", "int", None), ("double", "float", None), ("string", "string", None),
    ("decimal(10,2)", "decimal(12,2)", "decimal(12,2)"),
    ("decimal(12,2)", "decimal(10,2)", None), ("decimal(10,2)", "decimal(8,1)", None),
    ("decimal(10,2)", "decimal(10,1)", "decimal(11,2)"),
])
def test_widened_columns_are_promoted(current: str, incoming: str, result: str | None) -> None:
    assert promoted_type("c.db.t", "col", current, incoming) == result


@pytest.mark.parametrize("current, incoming", [
    ("decimal(10,2)", "decimal(10,3)"), ("decimal(38,2)", "decimal(38,1)"),
    ("int", "string"), ("bigint", "double"), ("decimal(10,2)", "string"), ("date", "timestamp"),
])
def test_changes_iceberg_cannot_promote_fail_naming_table_and_column(current: str,
                                                                    incoming: str) -> None:
    with pytest.raises(TypeChangeError, match=r"table c\.db\.t column col: type changed"):
        promoted_type("c.db.t", "col", current, incoming)


@given(st.integers(1, 38), st.integers(0, 38), st.integers(1, 38), st.integers(0, 38))
def test_a_promoted_decimal_holds_every_value_of_both_types(p: int, s: int, p2: int,
                                                            s2: int) -> None:
    if s > p or s2 > p2:
        return
    try:
        result = promoted_type("t", "c", f"decimal({p},{s})", f"decimal({p2},{s2})")
    except TypeChangeError:
        assert s2 > s or p2 - s2 + s > 38
        return
    np, ns = (p, s) if result is None else map(int, result[8:-1].split(","))
    assert ns == s and np >= p and np - ns >= p2 - s2 and ns >= s2


def test_kafka_secrets_come_from_a_file_or_the_environment_not_argv(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    props = tmp_path / "kafka.properties"
    props.write_text("# secrets\nsecurity.protocol=SASL_SSL\nsasl.password = s3cr=t\n")
    opts = parse_options([*BASE, "--kafka-config", str(props), "--kafka-conf", "client.id=x"])
    assert opts.kafka_settings() == {"bootstrap.servers": "k:9092",
                                     "security.protocol": "SASL_SSL",
                                     "sasl.password": "s3cr=t", "client.id": "x"}
    as_json = tmp_path / "kafka.json"
    as_json.write_text(json.dumps({"sasl.password": "pw", "enable.ssl.certificate.verification":
                                   True}))
    monkeypatch.setenv(KAFKA_CONFIG_ENV, str(as_json))
    assert parse_options(BASE).kafka_conf == {"sasl.password": "pw",
                                              "enable.ssl.certificate.verification": "true"}


@pytest.mark.parametrize("content, named", [
    (None, "cannot read"), ("no equals sign\n", "line 1: expected key=value"),
    ("{not json", "not valid JSON"), ("{\"a\": [1]} [", "not valid JSON"),
])
def test_a_bad_kafka_config_file_exits_2_with_one_line(
        tmp_path: Path, content: str | None, named: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "kafka.conf"
    if content is not None:
        path.write_text(content)
    assert main([*BASE, "--kafka-config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--kafka-config" in err and named in err


@pytest.mark.parametrize("hint", ["db.t.c=40,2", "t.c=10,2", "db.t.c=5,6", "db.t.c"])
def test_bad_decimal_column_hints_exit_2(hint: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--decimal-column", hint]) == 2
    assert "--decimal-column" in capsys.readouterr().err


@pytest.mark.parametrize("incoming, result", [
    ({"id": "int", "n": "bigint"}, True), ({"id": "int"}, True),
    ({"id": "int", "n": "int", "d": "decimal(8,2)"}, True),
    ({"id": "int", "n": "bigint", "s": "string"}, False),  # a new column
    ({"id": "bigint", "n": "bigint"}, False),  # widened: the table is promoted first
    ({"id": "int", "d": "decimal(12,2)"}, False),
    ({"id": "int", "n": "string"}, False),  # not promotable: evolving it stops the job
])
def test_a_range_feeds_the_merge_source_only_if_its_columns_fit_the_table(
        incoming: dict[str, str], result: bool) -> None:
    table = [ColumnSpec("id", "int"), ColumnSpec("n", "bigint"), ColumnSpec("d", "decimal(10,2)")]
    shapes = [Shape("p.db.t", (ColumnSpec("id", "int"),), ("id",)),
              Shape("p.db.t", tuple(ColumnSpec(k, v) for k, v in incoming.items()), ("id",))]
    assert fits(table, shapes) is result


def test_unpinned_pyspark_threads_are_refused_at_start_naming_the_setting(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PYSPARK_PIN_THREAD", "false")
    assert main(BASE) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PYSPARK_PIN_THREAD=false" in err

