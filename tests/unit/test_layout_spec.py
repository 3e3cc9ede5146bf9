"""--partition-by / --sort-by terms parsed into Iceberg fields and written back as its SQL."""

from __future__ import annotations

import pytest

from spark_consumer.iceberg.layout_spec import (
    Field,
    SortField,
    SpecError,
    check_columns,
    check_tables,
    iceberg_field,
    parse_partition_by,
    parse_sort_by,
)


def test_every_transform_parses_and_round_trips_to_iceberg_sql() -> None:
    terms = "region, bucket(16, id), truncate(4,`a,b`), YEARS(at), months(at), days(d), hours(`at`)"
    spec = parse_partition_by(["shop.orders=" + terms, "shop.t="])
    fields = spec["shop.orders"]
    assert [f.sql() for f in fields] == [
        "`region`", "bucket(16, `id`)", "truncate(4, `a,b`)", "years(`at`)", "months(`at`)",
        "days(`d`)", "hours(`at`)"]
    assert spec["shop.t"] == ()
    # As Iceberg's Java API names the same transforms: the spec read back compares equal.
    assert [iceberg_field(t, c) for t, c in [
        ("identity", "region"), ("bucket[16]", "id"), ("truncate[4]", "a,b"), ("year", "at"),
        ("month", "at"), ("day", "d"), ("hour", "at")]] == list(fields)


def test_sort_terms_take_iceberg_default_null_order_unless_given() -> None:
    order = parse_sort_by(["db.t=a, b DESC, c desc nulls first, bucket(4, d) ASC NULLS LAST"])
    assert order["db.t"] == (
        SortField(Field("identity", "a")), SortField(Field("identity", "b"), True, False),
        SortField(Field("identity", "c"), True, True),
        SortField(Field("bucket", "d", 4), False, False))


@pytest.mark.parametrize(("items", "message"), [
    (["db.t=id", "db.t=region"], "db.t given twice"),
    (["db.t=id, id"], "names a field twice"),
    (["db.t.x=id"], "expected DB.TABLE=TERM"),
    (["db.t=truncate(0, id)"], "truncate needs a width > 0"),
    (["db.t=days(3, at)"], "unknown transform 'days'"),
])
def test_a_bad_partition_option_names_what_is_wrong(items: list[str], message: str) -> None:
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_partition_by(items)


def test_a_transform_is_refused_for_a_column_type_iceberg_does_not_take() -> None:
    types = {"id": "int", "price": "double", "at": "timestamp", "d": "date"}
    check_columns("db.t", [Field("bucket", "id", 8), Field("day", "d"), Field("hour", "at")],
                  types, "--partition-by")
    with pytest.raises(SpecError, match="bucket\\(8, `price`\\) cannot apply .* double"):
        check_columns("db.t", [Field("bucket", "price", 8)], types, "--partition-by")
    with pytest.raises(SpecError, match="hours\\(`d`\\) cannot apply .* date"):
        check_columns("db.t", [Field("hour", "d")], types, "--sort-by")


def test_a_layout_table_no_topic_carries_is_refused() -> None:
    check_tables(["shop.orders"], ["dbz.shop.orders", "dbz.shop.items"])
    with pytest.raises(SpecError, match="shop.ordrs is not the DB.TABLE of any topic in "
                       "--topics \\(shop.items, shop.orders\\)"):
        check_tables(["shop.ordrs"], ["dbz.shop.orders", "dbz.shop.items"])
