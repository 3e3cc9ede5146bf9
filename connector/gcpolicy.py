"""Garbage collection for a pipeline that allocates containers for every row.

CPython collects its youngest generation every 700 container allocations. Decoded rows,
pickled batches and envelopes allocate several per row, and the rows waiting between the
stages were traversed again at every collection (the engine process: ~250 collections,
0.08-0.15 s of CPU per 60,000 bulk rows, by gc.callbacks). The pipeline makes almost no
reference cycles: collecting every `YOUNG_THRESHOLD` allocations, with the objects that
exist at start (modules, configuration, caches) frozen out of it, leaves a few collections.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000


def tune_for_streaming() -> None:
    """Freeze what exists now and collect the youngest generation less often."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
