"""Which columns a rows event's images leave out (rowimages.missing_columns)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from connector.binlog.rowimages import missing_columns


def event(count: int, present: bytes, after: bytes | None = None) -> SimpleNamespace:
    return SimpleNamespace(number_of_columns=count, columns_present_bitmap=present,
                           columns_present_bitmap2=after)


@pytest.mark.parametrize(("count", "bitmap"), [
    (4, b"\x0f"),  # MariaDB clears the last byte's unused bits
    (4, b"\xff"),  # MySQL sets them
    (8, b"\xff"), (9, b"\xff\x01"), (9, b"\xff\xff"), (16, b"\xff\xff"),
])
def test_whole_images_leave_nothing_out(count: int, bitmap: bytes) -> None:
    assert missing_columns(event(count, bitmap), update=False) == ()
    assert missing_columns(event(count, bitmap, bitmap), update=True) == ()


def test_minimal_and_noblob_images_name_what_they_leave_out() -> None:
    assert missing_columns(event(4, b"\x03"), update=False) == (2, 3)  # MINIMAL insert
    assert missing_columns(event(4, b"\xf7"), update=False) == (3,)  # NOBLOB, MySQL's padding
    # MINIMAL update: the key before, the changed column after: either image counts.
    assert missing_columns(event(4, b"\x01", b"\x02"), update=True) == (0, 1, 2, 3)
    assert missing_columns(event(9, b"\xff\x01", b"\xff\x00"), update=True) == (8,)
