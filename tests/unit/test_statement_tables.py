"""Which tables a statement-logged write names (connector/binlog/statements.py).

The property tests build multi-table UPDATE and DELETE statements from the grammar's parts
(joins of every kind, aliases with and without AS, quoted names, ON and USING, comments and
keywords inside strings) and check that exactly the tables written are named; an
unqualified SET column names every table, and nothing ever raises.
"""

from __future__ import annotations

import itertools
import re
import time
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.binlog.statements import is_dml, statement_gap, written_tables

Table = tuple[str, str]


@pytest.mark.parametrize(("query", "default_db", "tables"), [
    # Issue #22: the first table of a JOIN is not the one written.
    ("UPDATE audit.log a JOIN shop.orders o ON o.id = a.id SET o.v = 1", "audit",
     (("shop", "orders"),)),
    # Issued from a database not captured: the qualified names still tell.
    ("UPDATE audit.log a, shop.orders o SET o.v = 2 WHERE o.id = a.id", "other",
     (("shop", "orders"),)),
    ("UPDATE audit.log a, shop.orders o SET v = 2 WHERE o.id = a.id", "other",
     (("audit", "log"), ("shop", "orders"))),
    ("UPDATE log, shop.orders SET orders.v = log.v", "audit", (("shop", "orders"),)),
    ("UPDATE log, shop.orders SET shop.orders.v = 1, log.v = 2", "audit",
     (("shop", "orders"), ("audit", "log"))),
    (("UPDATE LOW_PRIORITY IGNORE shop.t1 AS x INNER JOIN shop.t2 y USING (id) "
      "SET x.a = (SELECT 1 FROM z WHERE q = ','), y.b = LEFT('SET y.c = 1', 2)"), None,
     (("shop", "t1"), ("shop", "t2"))),
    (("UPDATE a FORCE INDEX FOR JOIN (i) LEFT OUTER JOIN b IGNORE KEY (k) ON a.id = b.id "
      "STRAIGHT_JOIN c ON c.id = LEFT(b.x, 1) SET c.v = 1"), "d", (("d", "c"),)),
    ("UPDATE (a JOIN b ON a.id = b.id), c SET b.v = 1", "d", (("d", "b"),)),
    ("WITH c AS (SELECT 1 AS id) UPDATE shop.orders o JOIN c ON c.id = o.id SET v = 3", "x",
     (("shop", "orders"),)),
    ("DELETE a, o FROM audit.log a JOIN shop.orders o ON o.id = 9 WHERE a.id = 9", "audit",
     (("audit", "log"), ("shop", "orders"))),
    ("DELETE o.* FROM audit.log a JOIN shop.orders AS o ON o.id = a.id", "audit",
     (("shop", "orders"),)),
    ("DELETE FROM o USING audit.log a, shop.orders o WHERE o.id = a.id", "audit",
     (("shop", "orders"),)),
    ("DELETE QUICK FROM orders.* USING audit.log JOIN shop.orders", "audit",
     (("shop", "orders"),)),
    ("DELETE FROM t AS x WHERE x.id = 1", "d", (("d", "t"),)),
    ("DELETE HISTORY FROM s.t BEFORE SYSTEM_TIME '2020-01-01'", None, (("s", "t"),)),
    ("/*!40000 INSERT */ INTO t VALUES (1)", "d", (("d", "t"),)),
    ("/*M!100301 REPLACE */ INTO t VALUES (1)", "d", (("d", "t"),)),
    ("-- a comment\n--\nDELETE FROM t -- x", "d", (("d", "t"),)),
    ("INSERT /*+ SET_VAR(sort_buffer_size = 16M) */ INTO s.t SELECT * FROM u", None,
     (("s", "t"),)),
    ("CREATE TABLE shop.copy SELECT * FROM shop.orders", None, (("shop", "copy"),)),
    ("CREATE OR REPLACE TABLE IF NOT EXISTS copy (x INT) IGNORE (SELECT 1)", "d",
     (("d", "copy"),)),
    ("create table `a``b` as table s", "d", (("d", "a`b"),)),
    (("LOAD DATA LOCAL INFILE '/tmp/into table x.y' IGNORE INTO TABLE `shop`.`orders` "
      "FIELDS TERMINATED BY '\\t'"), None, (("shop", "orders"),)),
])
def test_the_tables_a_statement_writes(query: str, default_db: str | None,
                                       tables: tuple[Table, ...]) -> None:
    assert is_dml(query) != query.upper().startswith("CREATE")  # DDL that writes rows
    assert written_tables(query, default_db) == tables


@pytest.mark.parametrize(("query", "default_db"), [
    ("UPDATE t SET v = 1", None),  # no default database: the table is not named
    ("UPDATE a JOIN (SELECT 1 AS id) d ON d.id = a.id SET d.id = 2", "x"),  # not a table
    ("UPDATE a, b SET c.v = 1", "x"),  # c is none of them
    ("DELETE z FROM a JOIN b", "x"),
    ("UPDATE t FOR PORTION OF p FROM 1 TO 2 SET v = 1", "x"),  # a form not read here
    ("INSERT INTO", "x"),
    ("UPDATE a JOIN b ON (a.id = b.id SET a.v = 1", "x"),
    # How both servers log a stored function that wrote, for DO f(), SELECT f(), SET @x = f().
    ("SELECT `audit`.`f`()", "audit"),
    ("SELECT `audit`.`f`(1, 'INSERT INTO x.y')", None),
    ("DO audit.f()", "shop"),
    ("CALL p()", "shop"),
    ("WITH c AS (SELECT 1) SELECT f() FROM c", "shop"),
    ("CREATE TABLE copy SELECT 1", None),
    ('CREATE TABLE "ansi quoted" SELECT 1', "d"),
])
def test_a_write_whose_tables_cannot_be_named(query: str, default_db: str | None) -> None:
    assert is_dml(query) != query.upper().startswith("CREATE")  # DDL that writes rows
    assert written_tables(query, default_db) is None


@pytest.mark.parametrize("query", [
    "BEGIN", "COMMIT", "XA END X'61',X'',1", "CREATE TABLE t (a INT)", "SAVEPOINT s",
    "ALTER TABLE t ADD COLUMN insert_x INT", "# Dummy event replacing event type 160",
    "/* INSERT INTO t */ ROLLBACK TO s", "",
    # DDL, CREATE TABLE ... SELECT as the ROW format logs it among them (MariaDB, MySQL)
    "CREATE TABLE `shop`.`copy2` (\n  `id` int(11) NOT NULL,\n  `v` int(11) DEFAULT NULL\n)",
    "CREATE TABLE `shop`.`copy2` (\n  `id` int NOT NULL\n) START TRANSACTION",
    "CREATE TABLE t LIKE s", "CREATE TABLE t (LIKE s)", "CREATE TEMPORARY TABLE t SELECT 1",
    ("CREATE TABLE t (a INT COMMENT 'select', `select` INT) PARTITION BY LIST (a) "
     "(PARTITION p VALUES IN (1))"), "CREATE TABLE (", "CREATE VIEW v AS SELECT 1",
    'CREATE TABLE "ansi quoted" (a INT)',
])
def test_what_writes_no_rows(query: str) -> None:
    assert not is_dml(query)
    assert written_tables(query, "d") == ()
    assert statement_gap(query, "d") is None


def test_a_large_insert_is_not_read_past_its_table() -> None:
    query = "INSERT INTO s.t VALUES " + ",".join(f"({i}, 'v{i}')" for i in range(300_000))
    started = time.perf_counter()
    assert written_tables(query, None) == (("s", "t"),)
    assert time.perf_counter() - started < 0.05
    gap = statement_gap(query, None)
    assert gap is not None and len(gap.what) < 140


# -- generated multi-table statements ------------------------------------------------------

_BARE = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).map(lambda s: f"n{s}")
_QUOTED = st.sampled_from(["select", "on", "join", "a b", "x`y", "set", "Where", "9"])
_SEPARATORS = st.sampled_from([" ", "\n", " /* SET x.y = 1 */ ", " -- JOIN c\n",
                               " # , ON\n", "\t"])


@dataclass(frozen=True)
class _Ref:
    db: str | None
    table: str
    alias: str | None

    def table_id(self) -> Table:
        return (self.db or "d", self.table)

    def qualifier(self) -> str:
        return _quote(self.alias) if self.alias else _quote(self.table)


def _quote(name: str) -> str:
    if name.startswith("n") and name.isidentifier() and name.islower():
        return name
    return "`" + name.replace("`", "``") + "`"


@st.composite
def _refs(draw: st.DrawFn) -> list[_Ref]:
    names = draw(st.lists(st.one_of(_BARE, _QUOTED), min_size=2, max_size=4,
                          unique_by=str.lower))
    refs = []
    for i, name in enumerate(names):
        db = draw(st.sampled_from([None, "d", "shop", "other db"]))
        alias = draw(st.sampled_from([None, f"a{i}", f"A{i}x"]))
        refs.append(_Ref(db, name, alias))
    return refs


def _factor(ref: _Ref, draw: st.DrawFn) -> str:
    name = _quote(ref.table) if ref.db is None else f"{_quote(ref.db)}.{_quote(ref.table)}"
    if ref.alias:
        name += draw(st.sampled_from([" AS ", " "])) + ref.alias
    return name + draw(st.sampled_from(["", " USE INDEX (i)", " FORCE KEY FOR ORDER BY (k)"]))


_CONDITIONS = st.sampled_from(["{a}.id = {b}.id", "({a}.id, 'JOIN x') = ({b}.id, 'ON')",
                               "LEFT({a}.n, 1) = RIGHT({b}.n, 1) AND {a}.x IN (1, 2)",
                               "{a}.id = (SELECT MAX(id) FROM z WHERE z.k = ',')"])


@st.composite
def _references(draw: st.DrawFn, refs: list[_Ref]) -> str:
    text = _factor(refs[0], draw)
    for before, ref in itertools.pairwise(refs):
        how = draw(st.sampled_from([", ", " JOIN ", " INNER JOIN ", " CROSS JOIN ",
                                    " LEFT JOIN ", " LEFT OUTER JOIN ", " RIGHT JOIN ",
                                    " STRAIGHT_JOIN ", " NATURAL JOIN "]))
        text += how + _factor(ref, draw)
        if how.strip() not in (",", "NATURAL JOIN", "CROSS JOIN"):
            if draw(st.booleans()):
                cond = draw(_CONDITIONS)
                text += " ON " + cond.format(a=before.qualifier(), b=ref.qualifier())
            else:
                text += " USING (id)"
    return text


def _decorate(text: str, draw: st.DrawFn) -> str:
    """Separators anywhere between the words (comments included), keywords in any case."""
    words = re.findall(r"(?:`(?:[^`]|``)*`|'[^']*'|[^\s`'])+", text)
    out = words[0]
    for word in words[1:]:
        out += draw(_SEPARATORS) + (word.lower() if word.isupper() and draw(st.booleans())
                                    else word)
    return out


@st.composite
def _multi_update(draw: st.DrawFn) -> tuple[str, set[Table]]:
    refs = draw(_refs())
    written = draw(st.lists(st.sampled_from(refs), min_size=1, unique=True))
    assignments = []
    for ref in written:
        column = ref.qualifier() + ".v"
        if ref.alias is None and ref.db is not None and draw(st.booleans()):
            column = f"{_quote(ref.db)}.{_quote(ref.table)}.v"
        assignments.append(f"{column} = " + draw(st.sampled_from(
            ["1", "'a, b = c'", "(SELECT 2 FROM q WHERE q.x = 'SET')", "CONCAT(x, ',', y)"])))
    expected = {ref.table_id() for ref in written}
    if draw(st.booleans()):
        assignments.insert(draw(st.integers(0, len(assignments))), "plain = 0")
        expected = {ref.table_id() for ref in refs}  # an unqualified column: any table
    where = draw(st.sampled_from(["", " WHERE a.id > 1", " WHERE x = ',' ORDER BY id LIMIT 3"]))
    query = (f"UPDATE {draw(_references(refs))} SET " + ", ".join(assignments) + where)
    return _decorate(query, draw), expected


@st.composite
def _multi_delete(draw: st.DrawFn) -> tuple[str, set[Table]]:
    refs = draw(_refs())
    deleted = draw(st.lists(st.sampled_from(refs), min_size=1, unique=True))
    targets = ", ".join(ref.qualifier() + draw(st.sampled_from(["", ".*"])) for ref in deleted)
    references = draw(_references(refs))
    if draw(st.booleans()):
        query = f"DELETE {targets} FROM {references}"
    else:
        query = f"DELETE FROM {targets} USING {references}"
    query += draw(st.sampled_from(["", " WHERE x = 'USING'"]))
    return _decorate(query, draw), {ref.table_id() for ref in deleted}


@settings(max_examples=400, deadline=None)
@given(st.one_of(_multi_update(), _multi_delete()))
def test_a_multi_table_write_names_exactly_the_tables_it_writes(
        case: tuple[str, set[Table]]) -> None:
    query, expected = case
    written = written_tables(query, "d")
    assert written is not None, query
    assert set(written) == expected, query
    assert len(written) == len(set(written))


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=80),
                 st.lists(st.sampled_from(["UPDATE", "DELETE", "INSERT", "INTO", "FROM",
                                           "JOIN", "SET", "a", "b.c", ",", "(", ")", "=",
                                           "`x`", "'s'", "/*!", "*/", ".", "*", "USING",
                                           "ON", "WITH", "AS", "LOAD", "TABLE"]),
                          max_size=16).map(" ".join)))
def test_any_text_is_read_without_an_error(query: str) -> None:
    written = written_tables(query, "d")
    assert written is None or all(isinstance(db, str) and isinstance(table, str)
                                  for db, table in written)
    assert (written == ()) == (statement_gap(query, "d") is None)
