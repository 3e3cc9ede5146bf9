"""Snapshot progress keys keep their types through the offsets (JSON) and back."""

from __future__ import annotations

import datetime
import decimal
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from connector.snapshot.progress import TableProgress, key_from_json, key_to_json

_values = st.one_of(
    st.integers(min_value=-2**64, max_value=2**64), st.text(max_size=20),
    st.binary(max_size=20), st.none(),
    st.decimals(allow_nan=False, allow_infinity=False, places=5,
                min_value=decimal.Decimal("-1e30"), max_value=decimal.Decimal("1e30")),
    st.dates(), st.datetimes(), st.timedeltas(min_value=datetime.timedelta(hours=-838),
                                              max_value=datetime.timedelta(hours=838)),
    st.floats(allow_nan=False, allow_infinity=False),
)


@given(st.lists(_values, min_size=1, max_size=4).map(tuple))
def test_keys_round_trip_with_their_types(key: tuple[Any, ...]) -> None:
    stored = json.loads(json.dumps(key_to_json(key)))
    back = key_from_json(stored)
    assert back == key
    assert [type(v) for v in back or ()] == [type(v) for v in key]


def test_a_long_decimal_key_stays_exact() -> None:
    key = (decimal.Decimal("123456789012345678901234567.89"),)
    progress = TableProgress(table="d.t", last_key=key, max_key=key)
    restored = TableProgress.from_json(json.loads(json.dumps(progress.to_json())))
    assert restored.last_key == key and isinstance(restored.last_key[0], decimal.Decimal)


def test_keys_written_by_earlier_versions_still_read() -> None:
    assert key_from_json([1, "a", {"hex": "00ff"}]) == (1, "a", b"\x00\xff")
