"""How many rows the next snapshot chunk asks for: the configured size, fewer for wide rows.

A chunk is held whole: selected and encoded in the chunk reader, pickled on its pipe, kept
in the window until it closes, with the next chunk read ahead. With 256 KB rows the default
1,024-row chunk was 256 MB in each of those places. So a chunk is bounded by CHUNK_BYTES as
well as by rows: a table whose widest possible row fits the configured size within the
budget is chunked as configured; another's first chunk asks for PROBE_ROWS rows, and each
later one for as many rows as the budget holds at the bytes per row the last chunk took.
Any chunk size gives the same records (the watermark algorithm holds for every chunk).
"""

from __future__ import annotations

from connector.schema import TableSchema

CHUNK_BYTES = 8 * 1024 * 1024  # encoded bytes of one chunk, as the chunk reader sends it
PROBE_ROWS = 32  # the first chunk of a table whose rows may be wide
ROW_OVERHEAD = 512  # bytes an encoded row takes beyond its values (envelope, key, names)
# Columns without a width small enough to bound a row by: their rows are measured instead.
UNBOUNDED = frozenset({"tinyblob", "blob", "mediumblob", "longblob", "tinytext", "text",
                       "mediumtext", "longtext", "json", "geometry", "point", "linestring",
                       "polygon", "multipoint", "multilinestring", "multipolygon",
                       "geometrycollection", "vector"})
FIXED_WIDTH = 96  # numbers (a DECIMAL(65) too), dates, enums and sets as encoded


def widest_row(schema: TableSchema) -> int | None:
    """An upper bound of an encoded row's bytes, None when a column has no useful bound."""
    total = ROW_OVERHEAD
    for column in schema.columns:
        if column.type_name in UNBOUNDED:
            return None
        if column.length is not None and column.type_name in ("char", "varchar", "binary",
                                                              "varbinary", "bit"):
            total += 2 * 4 * column.length  # utf8mb4, escaped or base64 at worst
        else:
            total += FIXED_WIDTH
    return total


def chunk_rows(configured: int, widest: int | None, row_bytes: float | None,
               budget: int = CHUNK_BYTES) -> int:
    """The next chunk's row limit: `configured`, unless rows as wide as `widest` (the
    schema's bound) or `row_bytes` (measured on the table's last chunk) would pass `budget`."""
    if widest is not None and configured * widest <= budget:
        return configured
    if row_bytes is None:
        return min(configured, PROBE_ROWS)
    return max(1, min(configured, int(budget / max(row_bytes, 1.0))))


class ChunkSizer:
    """One table's chunk sizing: its schema's bound, taken once, and the bytes per row its
    last chunk took."""

    def __init__(self, schema: TableSchema) -> None:
        self.schema = schema
        self._widest = widest_row(schema)
        self._row_bytes: float | None = None

    def rows(self, configured: int) -> int:
        return chunk_rows(configured, self._widest, self._row_bytes)

    def observe(self, rows: int, size: int) -> None:
        """A chunk of `rows` rows took `size` bytes (0: not measured)."""
        if rows and size:
            self._row_bytes = size / rows
