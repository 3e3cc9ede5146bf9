"""--partition-by / --sort-by values: Iceberg partition transforms and sort fields, parsed
and checked against a table's columns, and written back as Iceberg Spark SQL.

Spelling (Iceberg's Spark DDL): `col`, `bucket(N, col)`, `truncate(W, col)`,
`years(col)`, `months(col)`, `days(col)`, `hours(col)`; sort fields add `ASC`/`DESC` and
`NULLS FIRST`/`NULLS LAST`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Transform name in the option -> Iceberg's own name (Transform.toString without width).
_TIME = {"years": "year", "months": "month", "days": "day", "hours": "hour"}
_WIDTH = {"bucket", "truncate"}
_INTEGRAL = {"tinyint", "smallint", "int", "bigint"}
_TEMPORAL = {"date", "timestamp", "timestamp_ntz"}
# Source types Iceberg accepts per transform (decimal(p,s) is "decimal").
_TYPES = {
    "identity": None,  # any primitive
    "year": _TEMPORAL, "month": _TEMPORAL, "day": _TEMPORAL,
    "hour": {"timestamp", "timestamp_ntz"},
    "bucket": _INTEGRAL | {"decimal", "date", "timestamp", "timestamp_ntz", "string", "binary"},
    "truncate": _INTEGRAL | {"decimal", "string", "binary"},
}
_NAME = r"(?:[A-Za-z_][A-Za-z0-9_$]*|`(?:[^`]|``)+`)"
_FIELD = re.compile(rf"\s*(?:(?P<fn>[a-z]+)\s*\(\s*(?:(?P<n>\d+)\s*,\s*)?(?P<arg>{_NAME})\s*\)"
                    rf"|(?P<col>{_NAME}))\s*", re.IGNORECASE)
_ORDER = re.compile(r"\s+(ASC|DESC)?\s*(?:NULLS\s+(FIRST|LAST))?\s*$", re.IGNORECASE)


class SpecError(ValueError):
    """A --partition-by or --sort-by value that cannot be applied (one line)."""


@dataclass(frozen=True)
class Field:
    """One partition (or sort) term: an Iceberg transform of a column."""

    transform: str  # Iceberg's name: identity, bucket, truncate, year, month, day, hour
    column: str
    width: int | None = None  # bucket count or truncate width

    def sql(self) -> str:
        """The term as Iceberg's Spark SQL writes it: `bucket(16, id)`, `days(ts)`."""
        col = "`" + self.column.replace("`", "``") + "`"
        if self.transform == "identity":
            return col
        if self.width is not None:
            return f"{self.transform}({self.width}, {col})"
        return f"{self.transform}s({col})"

    def __str__(self) -> str:
        return self.sql()


@dataclass(frozen=True)
class SortField:
    """One sort term: a field, its direction and where nulls go (Iceberg's defaults)."""

    field: Field
    descending: bool = False
    nulls_first: bool = True

    def sql(self) -> str:
        return (f"{self.field.sql()} {'DESC' if self.descending else 'ASC'} "
                f"NULLS {'FIRST' if self.nulls_first else 'LAST'}")

    def __str__(self) -> str:
        return self.sql()


def iceberg_field(transform: str, column: str) -> Field:
    """A field from Iceberg's own transform text (`bucket[16]`, `day`, `identity`)."""
    match = re.fullmatch(r"(\w+)(?:\[(\d+)\])?", transform)
    if match is None:
        return Field(transform, column)
    width = int(match.group(2)) if match.group(2) else None
    return Field(match.group(1), column, width)


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def _split(text: str) -> list[str]:
    """Comma-separated terms; commas inside parentheses or backquotes belong to the term."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == "`":
            quoted = not quoted
        elif not quoted and ch in "()":
            depth += 1 if ch == "(" else -1
        elif not quoted and depth == 0 and ch == ",":
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


def parse_field(term: str, flag: str) -> Field:
    """One transform term; SpecError naming it when it is not one Iceberg has."""
    match = _FIELD.fullmatch(term)
    if match is None:
        raise SpecError(f"{flag}: {term.strip()!r} is not a column or TRANSFORM(col) "
                        f"(identity, bucket(N, col), truncate(W, col), years/months/days/"
                        f"hours(col))")
    if match.group("col"):
        return Field("identity", _unquote(match.group("col")))
    fn, width, column = match.group("fn").lower(), match.group("n"), _unquote(match.group("arg"))
    if fn in _TIME and width is None:
        return Field(_TIME[fn], column)
    if fn in _WIDTH and width is not None and int(width) > 0:
        return Field(fn, column, int(width))
    if fn in _WIDTH:
        raise SpecError(f"{flag}: {term.strip()!r}: {fn} needs a width > 0: {fn}(N, col)")
    raise SpecError(f"{flag}: {term.strip()!r}: unknown transform {fn!r} (identity, "
                    f"bucket(N, col), truncate(W, col), years/months/days/hours(col))")


def _table_and_terms(item: str, flag: str) -> tuple[str, list[str]]:
    table, sep, terms = item.partition("=")
    if not sep or not re.fullmatch(r"[^.\s=]+\.[^.\s=]+", table.strip()):
        raise SpecError(f"{flag}: expected DB.TABLE=TERM[,TERM...] (the DB and table of the "
                        f"topic <prefix>.DB.TABLE), got {item!r}")
    return table.strip(), [t for t in _split(terms) if t.strip()]


def parse_partition_by(items: list[str]) -> dict[str, tuple[Field, ...]]:
    """DB.TABLE -> partition fields; `DB.TABLE=` (nothing) is an unpartitioned table."""
    out: dict[str, tuple[Field, ...]] = {}
    for item in items:
        table, terms = _table_and_terms(item, "--partition-by")
        if table in out:
            raise SpecError(f"--partition-by: {table} given twice")
        fields = tuple(parse_field(t, "--partition-by") for t in terms)
        if len(set(fields)) != len(fields):
            raise SpecError(f"--partition-by: {item!r} names a field twice")
        out[table] = fields
    return out


def parse_sort_by(items: list[str]) -> dict[str, tuple[SortField, ...]]:
    """DB.TABLE -> sort fields (`col [ASC|DESC] [NULLS FIRST|LAST]`); `DB.TABLE=` is unsorted."""
    out: dict[str, tuple[SortField, ...]] = {}
    for item in items:
        table, terms = _table_and_terms(item, "--sort-by")
        if table in out:
            raise SpecError(f"--sort-by: {table} given twice")
        fields = []
        for term in terms:
            order = _ORDER.search(term)
            direction, nulls = (order.group(1), order.group(2)) if order else (None, None)
            head = term[:order.start()] if order else term
            descending = (direction or "ASC").upper() == "DESC"
            first = (nulls.upper() == "FIRST") if nulls else not descending
            fields.append(SortField(parse_field(head, "--sort-by"), descending, first))
        out[table] = tuple(fields)
    return out


def check_tables(tables: list[str], topics: list[str]) -> None:
    """SpecError for a layout option's DB.TABLE that no topic of --topics carries (a typo
    would otherwise leave the table unpartitioned without a word)."""
    known = {".".join(t.split(".")[-2:]) for t in topics}
    for table in tables:
        if table not in known:
            raise SpecError(f"--partition-by/--sort-by: {table} is not the DB.TABLE of any "
                            f"topic in --topics ({', '.join(sorted(known))})")


def check_columns(table: str, fields: list[Field], types: dict[str, str], flag: str) -> None:
    """SpecError when a field names a column the table lacks or of a type its transform
    does not take (Iceberg's rules), so a bad option stops the job before any write."""
    for field in fields:
        spark_type = types.get(field.column)
        if spark_type is None:
            raise SpecError(f"{flag}: table {table} has no column {field.column!r} (columns: "
                            f"{', '.join(types)})")
        base = spark_type.split("(")[0]
        allowed = _TYPES[field.transform]
        if base in {"array", "map", "struct"} or (allowed is not None and base not in allowed):
            raise SpecError(f"{flag}: {field} cannot apply to column {field.column!r} of "
                            f"{table}: its type is {spark_type}")
