"""The comparison itself: what it masks, and that it still sees a real difference."""

from __future__ import annotations

from typing import Any

from tests.conformance.compare import allowed, compare_sequences, differences
from tests.conformance.runs import enveloped, payload


def record(after: dict[str, Any], **source: Any) -> dict[str, Any]:
    base = {"version": "x", "connector": "mysql", "ts_ms": 1, "gtid": None, "thread": None}
    schema = {"type": "struct", "name": "io.debezium.connector.mysql.Source",
              "fields": [{"field": "after", "type": "struct"}]}
    return {"topic": "p.db.t", "key": {"payload": {"id": 1}},
            "value": {"schema": schema, "payload": {"after": after, "source": {**base, **source},
                                                     "ts_ms": 5}}}


def test_allowed_fields_are_masked_and_flavour_names_read_alike() -> None:
    theirs = record({"v": 1}, version="3.6.3.Final")
    ours = record({"v": 1}, version="gtidmark", gtid="0-1-5", connector="mariadb")
    ours["value"]["payload"]["ts_ms"] = 6  # processing time
    ours["value"]["schema"]["name"] = "io.debezium.connector.mariadb.Source"
    assert compare_sequences([theirs], [ours], "t") == []


def test_a_value_difference_is_reported_with_its_column() -> None:
    problems = compare_sequences([record({"v": 1})], [record({"v": 2})], "t")
    assert problems == ["t[0] value.payload.after.v: Debezium 1 != gtidmark 2"]
    assert compare_sequences([record({"v": 1})], [], "t") == [
        "t: Debezium sent 1 records, gtidmark 0"]


def test_zoned_timestamps_of_snapshot_reads_may_differ_only_in_form() -> None:
    same = 'r[0] value.payload.after.ts3: Debezium "1970-01-01T00:00:01Z" != gtidmark ' \
           '"1970-01-01T00:00:01.000Z"'
    other = 'r[0] value.payload.after.ts3: Debezium "1970-01-01T00:00:01Z" != gtidmark ' \
            '"1970-01-01T00:00:02.000Z"'
    streamed = same.replace("r[0]", "p.db.t[0]")
    assert allowed(same) and not allowed(other) and not allowed(streamed)


def test_differences_walks_nested_structures() -> None:
    assert differences({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}], "c": 0}) == [
        "a[1].b: Debezium 2 != gtidmark 3", "c: only gtidmark has it (0)"]


def test_mysql_commit_times_must_be_equal() -> None:
    """Both take the GTID event's commit time: any difference is one."""
    assert not allowed("p.db.t[0] value.payload.source.ts_us: Debezium 1795638408429073 != "
                       "gtidmark 1795638408000000")


def test_binary_columns_declared_as_text_hold_the_same_bytes() -> None:
    same = 'p.db.t[0] value.payload.after.bin_c: Debezium "\\u0001\\u0002" != gtidmark ' \
           '"AQIAAA=="'
    other = same.replace("AQIAAA==", "AQMAAA==")
    assert allowed(same) and not allowed(other)
    assert not allowed(same.replace("bin_c", "c"))


def test_enum_members_differ_year_zero_and_debeziums_hex_default_do_not() -> None:
    assert not allowed("schema change[1] value.payload.tableChanges[0].table.columns[2]."
                       "enumValues[1]: Debezium \"'x y'\" != gtidmark \"'xy'\"")
    assert allowed("p.db.t[0] value.payload.after.y: Debezium 1900 != gtidmark 0")
    assert not allowed("p.db.t[0] value.payload.after.n: Debezium 1900 != gtidmark 0")
    hex_default = "p.db.mdefaults[0] value.schema.fields.after.fields.vb.default: " \
                  "Debezium \"MDEw\" != gtidmark \"AQI=\""
    assert allowed(hex_default) and not allowed(hex_default.replace("AQI=", "MA=="))
    expression = "history[3] tableChanges[0].table.columns[19].defaultValueExpression: " \
                 "Debezium \"010\" != gtidmark \"0102\""
    assert allowed(expression) and not allowed(expression.replace('"0102"', '"0"'))


def test_gtids_are_compared_on_mysql() -> None:
    theirs, ours = record({"v": 1}, gtid="u:1"), record({"v": 1}, gtid="u:2")
    assert compare_sequences([theirs], [ours], "t") == []
    assert compare_sequences([theirs], [ours], "t", flavour="mysql") == [
        't[0] value.payload.source.gtid: Debezium "u:1" != gtidmark "u:2"']


def test_schemaless_records_are_compared_in_an_envelope_of_their_own() -> None:
    """Bare keys and values put in {"payload": ...}: a difference still shows, with its
    column; tombstones and keyless records stay null."""
    def bare(v: int) -> dict[str, Any]:
        return {"topic": "p.db.t", "key": {"id": 1}, "value": {"after": {"v": v}, "ts_ms": v}}
    theirs, ours = enveloped([bare(1), {"topic": "p.db.t", "key": None, "value": None}]), \
        enveloped([bare(2), {"topic": "p.db.t", "key": None, "value": None}])
    assert theirs[1]["key"] is None and theirs[1]["value"] is None
    assert payload(theirs[0]["key"]) == {"payload": {"id": 1}}  # not an envelope with schema
    assert compare_sequences(theirs, ours, "t") == \
        ["t[0] value.payload.after.v: Debezium 1 != gtidmark 2"]
