"""Session-wide real services. A service that cannot start fails the tests; none skip."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.services import Broker, MariaDbPair, ServiceError

_counter = itertools.count(1)


def _start_or_fail(service: MariaDbPair | Broker, what: str) -> None:
    try:
        service.start()
    except (ServiceError, OSError) as exc:
        service.stop()
        pytest.fail(f"{what} could not start: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def services_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Short paths: a unix socket path must stay under ~100 bytes.
    base = Path(os.environ.get("GTIDMARK_TEST_DIR", "/tmp")) / f"gm-{os.getpid()}"
    base.mkdir(parents=True, exist_ok=True)
    return base


@pytest.fixture(scope="session")
def mariadb(services_dir: Path) -> Iterator[MariaDbPair]:
    pair = MariaDbPair.create(services_dir)
    _start_or_fail(pair, "MariaDB primary + replica")
    yield pair
    pair.stop()


@pytest.fixture(scope="session")
def broker(services_dir: Path) -> Iterator[Broker]:
    b = Broker(services_dir)
    _start_or_fail(b, "Kafka-protocol broker")
    yield b
    b.resume()
    b.stop()


@pytest.fixture
def unique_name(request: pytest.FixtureRequest) -> str:
    """A short name unique in this session: a database name and a topic prefix for one test."""
    stem = "".join(ch for ch in request.node.name.lower() if ch.isalnum())[:20]
    return f"t{next(_counter)}_{stem}"
