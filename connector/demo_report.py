"""The demo's verdict: source and Iceberg tables side by side, compared row for row."""

from __future__ import annotations

import datetime as dt
from typing import Any

DB = "shop"
TABLES = ("customers", "orders")
SHOW_ROWS = 10

Row = dict[str, Any]


def source_rows(primary: Any, table: str) -> tuple[list[str], dict[Any, Row]]:
    """Column names and rows by primary key, read from the primary (the truth)."""
    conn = primary.root(DB)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT * FROM `{table}` ORDER BY id")
            names = [d[0] for d in cur.description]
            return names, {row[0]: dict(zip(names, row)) for row in cur.fetchall()}
    finally:
        conn.close()


def iceberg_rows(spark: Any, table: str) -> tuple[list[str], dict[Any, Row]]:
    """Column names and rows by key of the Iceberg table; timestamps back as naive UTC."""
    from pyspark.sql.types import TimestampType

    frame = spark.table(f"gtidmark.{DB}.{table}")
    stamps = {f.name for f in frame.schema.fields if isinstance(f.dataType, TimestampType)}
    names = [f.name for f in frame.schema.fields]
    exprs = [f"unix_micros(`{n}`) AS `{n}`" if n in stamps else f"`{n}`" for n in names]
    epoch = dt.datetime(1970, 1, 1)
    rows: dict[Any, Row] = {}
    for record in frame.selectExpr(*exprs).collect():
        row = record.asDict()
        for n in stamps:
            if row[n] is not None:
                row[n] = epoch + dt.timedelta(microseconds=row[n])
        rows[row["id"]] = row
    return names, rows


def differing(source: dict[Any, Row], iceberg: dict[Any, Row]) -> int:
    """Keys missing on one side or with any column different (absent column = NULL)."""
    keys = source.keys() | iceberg.keys()
    return sum(1 for k in keys if k not in source or k not in iceberg
               or any(iceberg[k].get(c) != v for c, v in source[k].items()))


def cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, dt.datetime):
        return value.isoformat(" ")
    text = str(value)
    return text if len(text) <= 22 else text[:21] + "…"


def side_by_side(table: str, src: tuple[list[str], dict[Any, Row]],
                 ice: tuple[list[str], dict[Any, Row]], source: str) -> None:
    """The first rows of both tables next to each other, then the counts."""
    def lines(names: list[str], rows: dict[Any, Row]) -> list[str]:
        shown = [rows[k] for k in sorted(rows)[:SHOW_ROWS]]
        widths = [max([len(n)] + [len(cell(r.get(n))) for r in shown]) for n in names]
        out = [" ".join(n.ljust(w) for n, w in zip(names, widths))]
        out += [" ".join(cell(r.get(n)).ljust(w) for n, w in zip(names, widths)) for r in shown]
        return out

    left, right = lines(*src), lines(*ice)
    width = max(len(line) for line in left)
    print(f"\n  {source + ' ' + DB + '.' + table:<{width}} | Iceberg gtidmark.{DB}.{table}")
    for a, b in zip(left, right, strict=False):
        print(f"  {a:<{width}} | {b}")
    print(f"  {'... ' + str(len(src[1])) + ' rows':<{width}} | ... {len(ice[1])} rows")


def compare_all(primary: Any, spark: Any, source: str = "MariaDB primary") -> bool:
    """Print every table side by side and one verdict line per table; True if all equal.

    `source` names where the source rows come from in the header ("MySQL primary")."""
    verdicts = []
    for table in TABLES:
        src, ice = source_rows(primary, table), iceberg_rows(spark, table)
        side_by_side(table, src, ice, source)
        verdicts.append((table, differing(src[1], ice[1]), len(src[1])))
    print()
    for table, bad, count in verdicts:
        outcome = f"EQUAL ({count} rows)" if bad == 0 else f"DIFFERENT ({bad} rows differ)"
        print(f"  {DB}.{table}: {outcome}")
    print(flush=True)
    return all(bad == 0 for _, bad, _ in verdicts)
