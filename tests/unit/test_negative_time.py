"""Negative TIME(n) with a fraction: the binlog decoder's value, corrected to the stored one."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.binlog.row_changes import negative_time

D = dt.timedelta


def lib_decoded(stored: dt.timedelta) -> dt.timedelta:
    """What python-mysql-replication 1.0.17 yields for `stored` (measured: -(s + (1 - f)))."""
    if stored >= D(0):
        return stored
    whole, fraction = divmod(-stored // D(microseconds=1), 1_000_000)
    return -D(seconds=whole, microseconds=(1_000_000 - fraction) if fraction else 0)


# (binlog decoder's value, SELECT's value) pairs measured on MariaDB 10.11, TIME(6).
MEASURED = [
    (D(days=-1, seconds=82799, microseconds=250000), -D(hours=1, microseconds=250000)),
    (D(days=-35, seconds=3600, microseconds=999999), -D(hours=838, minutes=59, seconds=59,
                                                        microseconds=999999)),
    (D(days=-1, seconds=86398, microseconds=1), -D(seconds=1, microseconds=1)),
    (D(days=-1, seconds=86399, microseconds=500000), -D(microseconds=500000)),
    (D(hours=12, minutes=34, seconds=56, microseconds=789012),
     D(hours=12, minutes=34, seconds=56, microseconds=789012)),
    (D(0), D(0)),
]


@pytest.mark.parametrize(("binlog", "stored"), MEASURED)
def test_measured_values_are_corrected(binlog: dt.timedelta, stored: dt.timedelta) -> None:
    assert negative_time(binlog) == stored


@given(st.integers(-(838 * 3600 + 3599) * 1_000_000 - 999_999,
                   (838 * 3600 + 3599) * 1_000_000 + 999_999))
def test_every_time_value_comes_back(micros: int) -> None:
    stored = D(microseconds=micros)
    assert negative_time(lib_decoded(stored)) == stored
