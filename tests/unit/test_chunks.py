"""Chunk SQL: quoting, the expanded key predicate, and chunking that visits every key once."""

from __future__ import annotations

import operator
import re
from typing import Any, Literal

import pymysql
import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.flavours import MARIADB, MYSQL
from connector.snapshot.chunks import (
    chunk_query,
    count_estimate_query,
    key_predicate,
    max_key_query,
    quote_ident,
)
from signals.filters import parse_filter
from tests.services import MariaDbPair


def test_quote_ident_doubles_backticks() -> None:
    assert quote_ident("orders") == "`orders`"
    assert quote_ident("we`ird") == "`we``ird`"
    for bad in ("", "a\x00b"):
        with pytest.raises(ValueError):
            quote_ident(bad)


def test_first_chunk_single_key() -> None:
    sql, params = chunk_query("shop", "orders", ["id", "v"], ["id"], None, None, 100)
    assert sql == "SELECT `id`, `v` FROM `shop`.`orders` ORDER BY `id` ASC LIMIT 100"
    assert params == []


def test_next_chunk_composite_key_with_condition() -> None:
    sql, params = chunk_query("shop", "lines", ["a", "b", "c", "qty"], ["a", "b", "c"], (1, "x", 7),
                              ("`qty` > %s", [2]), 50)
    assert sql == (
        "SELECT `a`, `b`, `c`, `qty` FROM `shop`.`lines` WHERE ((`a` > %s) OR (`a` = %s AND `b` > %s) OR "
        "(`a` = %s AND `b` = %s AND `c` > %s)) AND (`qty` > %s) "
        "ORDER BY `a` ASC, `b` ASC, `c` ASC LIMIT 50")
    assert params == [1, 1, "x", 1, "x", 7, 2]


def test_chunk_upper_bound() -> None:
    sql, params = chunk_query("d", "t", ["a", "b"], ["a", "b"], (1, 2), None, 10, upto=(5, 6))
    assert "((`a` > %s) OR (`a` = %s AND `b` > %s)) AND ((`a` < %s) OR (`a` = %s AND `b` <= %s))" \
        in sql
    assert params == [1, 1, 2, 5, 5, 6]


def test_percent_signs_are_escaped_for_pymysql() -> None:
    condition = parse_filter("`n%` LIKE 'a%'").render(["n%"])
    sql, params = chunk_query("d", "100%", ["id", "n%"], ["id"], (3,), condition, 5)
    assert sql == ("SELECT `id`, `n%%` FROM `d`.`100%%` WHERE ((`id` > %s)) AND (`n%%` LIKE %s) "
                   "ORDER BY `id` ASC LIMIT 5")
    assert params == [3, "a%"]


def test_bounded_adds_a_server_side_time_limit() -> None:
    assert MARIADB.bounded("SELECT 1", 30.0) == \
        "SET STATEMENT max_statement_time=30 FOR SELECT 1"
    assert MYSQL.bounded("SELECT 1", 2.5) == "SELECT /*+ MAX_EXECUTION_TIME(2500) */ 1"
    with pytest.raises(ValueError):
        MARIADB.bounded("DO SLEEP(1)", 1)


def test_chunk_query_validates_arguments() -> None:
    with pytest.raises(ValueError):
        chunk_query("d", "t", ["a"], [], None, None, 10)
    with pytest.raises(ValueError):
        chunk_query("d", "t", [], ["a"], None, None, 10)
    with pytest.raises(ValueError):
        chunk_query("d", "t", ["a", "b"], ["a", "b"], (1,), None, 10)
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError):
            chunk_query("d", "t", ["a"], ["a"], None, None, bad)  # type: ignore[arg-type]


def test_max_key_query() -> None:
    sql, params = max_key_query("d", "t", ["a", "b"], None)
    assert sql == "SELECT `a`, `b` FROM `d`.`t` ORDER BY `a` DESC, `b` DESC LIMIT 1"
    assert params == []
    sql, params = max_key_query("d", "t", ["a"], ("`x` = %s", [1]))
    assert sql == "SELECT `a` FROM `d`.`t` WHERE (`x` = %s) ORDER BY `a` DESC LIMIT 1"
    assert params == [1]


def test_count_estimate_query() -> None:
    sql, params = count_estimate_query("d", "t")
    assert "information_schema.TABLES" in sql and "TABLE_ROWS" in sql
    assert params == ["d", "t"]


# ---- the predicate's meaning, evaluated in Python on the SQL text itself


def _python_predicate(sql: str, params: list[Any]) -> Any:
    """Turn an expanded key predicate's SQL into a Python function of a row dict."""
    expr = re.sub(r"`(\w+)`", r'row["\1"]', sql)
    expr = expr.replace(" = ", " == ").replace(" AND ", " and ").replace(" OR ", " or ")
    values = iter(params)
    expr = re.sub(r"%s", lambda _: repr(next(values)), expr)
    assert next(values, None) is None
    return eval(f"lambda row: {expr}")  # our own generated text


def _where(sql: str) -> str:
    return sql.split(" WHERE ", 1)[1].split(" ORDER BY ", 1)[0] if " WHERE " in sql else "True"


key_kinds = st.lists(st.sampled_from([int, str]), min_size=1, max_size=3)


@st.composite
def keysets(draw: st.DrawFn) -> tuple[list[str], list[tuple[Any, ...]]]:
    kinds = draw(key_kinds)
    parts = [st.integers(-3, 3) if k is int else st.text("abAB", max_size=2) for k in kinds]
    keys = draw(st.lists(st.tuples(*parts), unique=True, max_size=40))
    return [f"k{i}" for i in range(len(kinds))], keys


@given(keysets(), st.integers(1, 7))
def test_chunking_visits_every_key_once_in_order(data: tuple[list[str], list[Any]],
                                                 limit: int) -> None:
    names, keys = data
    table = sorted(keys)
    visited: list[tuple[Any, ...]] = []
    after = None
    for _ in range(len(table) + 2):
        sql, params = chunk_query("d", "t", names, names, after, None, limit)
        pred = _python_predicate(_where(sql), params)
        chunk = [k for k in table if pred(dict(zip(names, k, strict=True)))][:limit]
        visited += chunk
        if len(chunk) < limit:
            break
        after = chunk[-1]
    assert visited == table


@given(keysets(), st.data())
def test_key_predicate_is_lexicographic_order(data: tuple[list[str], list[Any]],
                                              draw: st.DataObject) -> None:
    names, keys = data
    if not keys:
        return
    bound = draw.draw(st.sampled_from(keys))
    ops: list[tuple[Literal[">", ">=", "<", "<="], Any]] = [
        (">", operator.gt), (">=", operator.ge), ("<", operator.lt), ("<=", operator.le)]
    for op, want in ops:
        pred = _python_predicate(*key_predicate(names, bound, op))
        for k in keys:
            assert pred(dict(zip(names, k, strict=True))) == want(k, bound), (op, bound, k)


# ---- against the real server, through the read-only cdc user on the replica


def test_chunks_on_mariadb_follow_server_collation(mariadb: MariaDbPair, unique_name: str) -> None:
    db, table = unique_name, "we`ird 100%"
    q = f"`{db}`.{quote_ident(table)}"
    mariadb.primary.execute(f"CREATE DATABASE {db}")
    mariadb.primary.execute(
        f"CREATE TABLE {q} (a INT, b VARCHAR(8) COLLATE utf8mb4_general_ci, v INT, "
        "PRIMARY KEY (a, b))")
    rows = [(a, b, i) for i, (a, b) in enumerate(
        (a, b) for a in (2, 1, 3) for b in ("b", "A", "c", "B2", "a1"))]
    mariadb.primary.execute(f"INSERT INTO {q.replace('%', '%%')} VALUES " + ", ".join(["(%s, %s, %s)"] * len(rows)),
                            [x for r in rows for x in r])
    mariadb.wait_synced()
    conn = pymysql.connect(**mariadb.cdc_settings(), autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT a, b FROM {q} ORDER BY a, b")
            server_order = [tuple(r) for r in cur.fetchall()]
            visited: list[tuple[Any, ...]] = []
            after = None
            while True:
                sql, params = chunk_query(db, table, ["a", "b", "v"], ["a", "b"], after,
                                          ("`v` LIKE %s", ["%"]), 4)
                cur.execute(sql, params)
                chunk = [(r[0], r[1]) for r in cur.fetchall()]
                visited += chunk
                if len(chunk) < 4:
                    break
                after = chunk[-1]
            sql, params = max_key_query(db, table, ["a", "b"], ("`v` LIKE %s", ["%"]))
            cur.execute(sql, params)
            max_key = cur.fetchone()
            sql, params = count_estimate_query(db, table)
            cur.execute(sql, params)
            estimate = cur.fetchone()
    finally:
        conn.close()
    assert visited == server_order and len(visited) == len(rows)
    assert server_order[:2] == [(1, "A"), (1, "a1")]  # the collation's order, not Python's
    assert max_key == (3, "c")
    assert estimate is not None and estimate[0] >= 0
