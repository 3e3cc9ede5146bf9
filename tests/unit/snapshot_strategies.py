"""Hypothesis strategies for the snapshot state as the offsets carry it."""

from __future__ import annotations

from hypothesis import strategies as st

from connector.snapshot.progress import TableProgress
from connector.snapshot.state import FailedTable, SnapshotState

_keys = st.none() | st.lists(st.integers() | st.text(max_size=8) | st.binary(max_size=8),
                             max_size=3).map(tuple)
_counts = st.integers(min_value=0, max_value=2**53)
progress = st.builds(TableProgress, table=st.text(min_size=1), condition=st.none() | st.text(),
                     surrogate_key=st.none() | st.text(), last_key=_keys, max_key=_keys,
                     rows=_counts, estimate=_counts,
                     started=st.floats(0, 2e9).map(lambda f: round(f, 3)))
failed = st.builds(FailedTable, table=st.text(min_size=1), reason=st.text(),
                   snapshot=st.none() | st.text(),
                   at=st.floats(0, 2e9).map(lambda f: round(f, 3)))
states = st.builds(SnapshotState, id=st.none() | st.text(), tables=st.lists(progress, max_size=3),
                   paused=st.booleans(), chunk_size=st.none() | st.integers(1, 2**31),
                   chunk_delay_ms=st.none() | st.integers(0, 2**31), initial=st.booleans(),
                   failed=st.lists(failed, max_size=2))
