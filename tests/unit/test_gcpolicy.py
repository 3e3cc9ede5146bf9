import gc
from collections.abc import Iterator

import pytest

from connector.gcpolicy import YOUNG_THRESHOLD, tune_for_streaming


@pytest.fixture
def restored_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("restored_gc")
def test_streaming_collects_the_young_generation_less_often_and_skips_startup_objects(
) -> None:
    middle, old = gc.get_threshold()[1:]
    tune_for_streaming()
    assert gc.get_threshold() == (YOUNG_THRESHOLD, middle, old)
    assert gc.get_freeze_count() > 0
