"""SQL for reading a table in primary-key chunks; SELECT only, nothing that locks or writes.

Composite keys use the expanded predicate `(k1 > ?) OR (k1 = ? AND k2 > ?) ...` rather than
a row comparison, which older MySQL/MariaDB optimizers do not turn into an index range.
Every query comes with a parameter list (maybe empty): always pass it to `execute`, since
`%` in names is escaped for the driver's `%s` formatting. A condition is a rendered
`signals.filters.Filter`: SQL already in that form, and its literal parameters.

Key columns named in `exact` (FLOAT and DOUBLE ones: `keys.exact_key_columns`) are also
selected as `col + 0e0`, a DOUBLE the server prints in full: a FLOAT's own text has 6
digits, so 1.0000001 and 1 would read as one key, and neither matches the binlog's value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from connector.snapshot.window import Key

__all__ = ["Condition", "chunk_query", "count_estimate_query", "exact_key_sql", "key_predicate",
           "max_key_query", "probe_query", "quote_ident"]

Condition = tuple[str, list[Any]]


def quote_ident(name: str) -> str:
    """A MySQL identifier in backticks (a backtick inside is doubled)."""
    if not name or "\x00" in name:
        raise ValueError(f"not a usable identifier: {name!r}")
    return "`" + name.replace("`", "``") + "`"


def _pct(sql: str) -> str:
    """Escape `%` for the driver's parameter formatting (pymysql and mysqlclient alike)."""
    return sql.replace("%", "%%")


def _table(db: str, table: str) -> str:
    return _pct(f"{quote_ident(db)}.{quote_ident(table)}")


def _columns(key_columns: Sequence[str]) -> list[str]:
    if not key_columns:
        raise ValueError("a chunk needs at least one key column")
    return [_pct(quote_ident(c)) for c in key_columns]


def exact_key_sql(name: str) -> str:
    """A FLOAT or DOUBLE key column as a DOUBLE printed with every digit: `x + 0e0` is
    exact (a FLOAT widens to DOUBLE without rounding) and, unlike the column, carries no
    fixed decimals (FLOAT(M,D) prints D)."""
    return f"({_pct(quote_ident(name))} + 0e0)"


def key_predicate(key_columns: Sequence[str], bound: Key,
                  op: Literal[">", ">=", "<", "<="]) -> tuple[str, list[Any]]:
    """`(k1,..,kn) op bound` in lexicographic key order, expanded into ANDs and ORs."""
    cols = _columns(key_columns)
    if len(bound) != len(cols):
        raise ValueError(f"key {bound!r} does not match key columns {list(key_columns)}")
    strict = op[0]
    terms: list[str] = []
    params: list[Any] = []
    for i, col in enumerate(cols):
        last = i == len(cols) - 1
        parts = [f"{c} = %s" for c in cols[:i]]
        parts.append(f"{col} {op if last else strict} %s")
        params.extend(bound[: i + 1])
        terms.append("(" + " AND ".join(parts) + ")")
    return " OR ".join(terms), params


def chunk_query(db: str, table: str, columns: Sequence[str], key_columns: Sequence[str],
                after: Key | None, condition: Condition | None, limit: int,
                upto: Key | None = None, exact: Sequence[str] = ()) -> tuple[str, list[Any]]:
    """The next chunk: `columns` of the rows with key > `after` (and <= `upto`), in key
    order, `limit` rows; after them, `exact_key_sql` of each column in `exact`, in that
    order. Named, not `*`: `*` leaves out INVISIBLE columns (MySQL's generated invisible
    primary key too), which the binlog's rows and Debezium's chunk SELECT carry."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"chunk limit must be a positive integer, not {limit!r}")
    cols = _columns(key_columns)
    if not columns:
        raise ValueError("a chunk selects at least one column")
    selected = [_pct(quote_ident(c)) for c in columns]
    where: list[str] = []
    params: list[Any] = []
    if after is not None:
        sql, args = key_predicate(key_columns, after, ">")
        where.append(f"({sql})")
        params += args
    if upto is not None:
        sql, args = key_predicate(key_columns, upto, "<=")
        where.append(f"({sql})")
        params += args
    if condition:
        where.append(f"({condition[0]})")
        params += condition[1]
    query = f"SELECT {', '.join([*selected, *(exact_key_sql(c) for c in exact)])} " \
        f"FROM {_table(db, table)}"
    if where:
        query += " WHERE " + " AND ".join(where)
    query += " ORDER BY " + ", ".join(f"{c} ASC" for c in cols) + f" LIMIT {limit}"
    return query, params


def max_key_query(db: str, table: str, key_columns: Sequence[str],
                  condition: Condition | None, exact: Sequence[str] = (),
                  ) -> tuple[str, list[Any]]:
    """The largest key now (where the snapshot of this table ends); no row if empty."""
    cols = _columns(key_columns)
    values = [exact_key_sql(name) if name in exact else col
              for name, col in zip(key_columns, cols)]
    query = f"SELECT {', '.join(values)} FROM {_table(db, table)}"
    params: list[Any] = []
    if condition:
        query += f" WHERE ({condition[0]})"
        params = list(condition[1])
    query += " ORDER BY " + ", ".join(f"{c} DESC" for c in cols) + " LIMIT 1"
    return query, params


def probe_query(db: str, table: str, condition: Condition) -> tuple[str, list[Any]]:
    """A query the server plans but does not run (LIMIT 0): catches a filter it refuses."""
    return f"SELECT 1 FROM {_table(db, table)} WHERE ({condition[0]}) LIMIT 0", list(condition[1])


def count_estimate_query(db: str, table: str) -> tuple[str, list[Any]]:
    """The optimizer's row estimate (cheap; exact counts would scan the table)."""
    sql = ("SELECT TABLE_ROWS FROM information_schema.TABLES "
           "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s")
    return sql, [db, table]
