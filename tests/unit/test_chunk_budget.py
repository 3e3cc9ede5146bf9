"""The snapshot chunk's row limit: as configured, fewer where rows are wide."""

from hypothesis import given
from hypothesis import strategies as st

from connector.schema import Column, TableSchema
from connector.snapshot.chunk_budget import (
    CHUNK_BYTES,
    PROBE_ROWS,
    ChunkSizer,
    chunk_rows,
    widest_row,
)


def table(*columns: Column) -> TableSchema:
    return TableSchema("db", "t", columns, ("id",))


def test_a_narrow_table_is_chunked_as_configured_from_its_first_chunk() -> None:
    schema = table(Column("id", "int"), Column("s", "varchar", length=40),
                   Column("d", "decimal", precision=10, scale=3))
    widest = widest_row(schema)
    assert widest is not None and widest < 2_000
    assert chunk_rows(1024, widest, None) == 1024


def test_a_table_with_a_blob_is_probed_then_sized_by_its_rows() -> None:
    schema = table(Column("id", "int"), Column("doc", "longtext"))
    assert widest_row(schema) is None
    assert chunk_rows(1024, None, None) == PROBE_ROWS
    assert chunk_rows(1024, None, 256 * 1024) == CHUNK_BYTES // (256 * 1024)  # 32 rows
    assert chunk_rows(1024, None, 300.0) == 1024  # narrow after all
    assert chunk_rows(1024, None, 64 * 1024 * 1024) == 1  # a row past the budget: one


def test_a_tables_sizer_probes_then_follows_its_last_chunk() -> None:
    sizer = ChunkSizer(table(Column("id", "int"), Column("doc", "longblob")))
    assert sizer.rows(1024) == PROBE_ROWS
    sizer.observe(PROBE_ROWS, 0)  # not measured: still probing
    assert sizer.rows(1024) == PROBE_ROWS
    sizer.observe(PROBE_ROWS, PROBE_ROWS * 512 * 1024)
    assert sizer.rows(1024) == CHUNK_BYTES // (512 * 1024)


def test_a_long_varchar_bounds_the_row_by_its_declared_length() -> None:
    schema = table(Column("id", "int"), Column("s", "varchar", length=16_000))
    widest = widest_row(schema)
    assert widest is not None
    assert chunk_rows(1024, widest, None) == PROBE_ROWS  # 1024 rows could be 131 MB
    assert chunk_rows(2, widest, None) == 2


@given(configured=st.integers(1, 100_000),
       row_bytes=st.one_of(st.none(), st.floats(0.0, 2.0**31, allow_nan=False)),
       widest=st.one_of(st.none(), st.integers(1, 2**24)))
def test_the_limit_is_within_the_configured_size_and_the_budget(
        configured: int, row_bytes: float | None, widest: int | None) -> None:
    rows = chunk_rows(configured, widest, row_bytes)
    assert 1 <= rows <= configured
    if widest is not None and configured * widest <= CHUNK_BYTES:
        assert rows == configured
    elif row_bytes is None:
        assert rows == min(configured, PROBE_ROWS)
    elif rows > 1:  # as many rows as the budget holds at the measured size
        assert rows * max(row_bytes, 1.0) <= CHUNK_BYTES
        assert rows == configured or (rows + 1) * max(row_bytes, 1.0) > CHUNK_BYTES
