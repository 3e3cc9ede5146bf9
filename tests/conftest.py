"""Session-wide real services. A service that cannot start fails the tests; none skip."""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests.connect_services import ConnectWorker
from tests.connector_tools import ConnectorProcess
from tests.debezium_runner import DEBEZIUM_SERVER_VERSION
from tests.kafka_services import Broker
from tests.mysql_services import MySqlPair
from tests.services import MariaDbPair, ServiceError

_counter = itertools.count(1)

# No per-example time limit: these properties are about results, and on two cores shared with
# JVMs and databases an example past hypothesis's 200 ms default failed a run in N as Flaky.
settings.register_profile("gtidmark", deadline=None)
settings.load_profile("gtidmark")


def _start_or_fail(service: MariaDbPair | MySqlPair | Broker | ConnectWorker,
                   what: str) -> None:
    try:
        service.start()
    except (ServiceError, OSError) as exc:
        service.stop()
        pytest.fail(f"{what} could not start: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def services_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    # Short paths: a unix socket path must stay under ~100 bytes.
    base = Path(os.environ.get("GTIDMARK_TEST_DIR", "/tmp")) / f"gm-{os.getpid()}"
    base.mkdir(parents=True, exist_ok=True)
    yield base
    # The services are stopped by now (their fixtures depend on this one): drop the data
    # directories (about 800 MB a session), keep the logs for a failed run to read.
    for data in base.glob("*/data"):
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="session")
def mariadb(services_dir: Path) -> Iterator[MariaDbPair]:
    pair = MariaDbPair.create(services_dir)
    _start_or_fail(pair, "MariaDB primary + replica")
    yield pair
    pair.stop()


@pytest.fixture(scope="session")
def mysql(services_dir: Path) -> Iterator[MySqlPair]:
    """MySQL 9 (from the Debian sid root `make setup` builds): primary + multi-threaded replica."""
    pair = MySqlPair.create(services_dir)
    _start_or_fail(pair, "MySQL primary + replica")
    yield pair
    pair.stop()


@pytest.fixture(params=["mariadb", "mysql"])
def source(request: pytest.FixtureRequest) -> MariaDbPair | MySqlPair:
    """Either flavour's primary + replica: a test that takes it runs on both."""
    pair: MariaDbPair | MySqlPair = request.getfixturevalue(request.param)
    return pair


@pytest.fixture(scope="session")
def dbz_mariadb(mariadb: MariaDbPair) -> Iterator[MariaDbPair]:
    """The session primary with a third read-only replica that reports MySQL 5.7.19.

    Debezium's MySQL connector refuses MariaDB's version string; conformance tests run it
    and gtidmark on this same replica.
    """
    try:
        pair = mariadb.another_replica("dbzreplica", server_id=3,
                                       version=DEBEZIUM_SERVER_VERSION)
    except (ServiceError, OSError) as exc:
        pytest.fail(f"MariaDB replica for Debezium could not start: {exc}", pytrace=False)
    yield pair
    pair.replica.stop()


@pytest.fixture(scope="session")
def broker(services_dir: Path) -> Iterator[Broker]:
    b = Broker(services_dir)
    _start_or_fail(b, "Kafka-protocol broker")
    yield b
    b.resume()
    b.stop()


@pytest.fixture(scope="session")
def connect_worker(broker: Broker, services_dir: Path) -> Iterator[ConnectWorker]:
    """A Kafka Connect worker with Debezium's MySQL connector on the session's broker,
    started by the first test that asks for it; its connectors are the tests' to delete."""
    worker = ConnectWorker(services_dir, broker.bootstrap)
    _start_or_fail(worker, "Kafka Connect worker")
    yield worker
    worker.stop()


@pytest.fixture
def unique_name(request: pytest.FixtureRequest) -> str:
    """A short name unique in this session: a database name and a topic prefix for one test."""
    stem = "".join(ch for ch in request.node.name.lower() if ch.isalnum())[:20]
    return f"t{next(_counter)}_{stem}"


@pytest.fixture
def connector() -> Iterator[list[ConnectorProcess]]:
    """`gtidmark run` processes a test starts; each is stopped at the end whatever happened."""
    started: list[ConnectorProcess] = []
    yield started
    for proc in started:
        proc.ensure_stopped()


@pytest.fixture
def group_factory(tmp_path: Path) -> Iterator[Any]:
    """Makes groups of instances of one connector; every one is stopped at the end."""
    from tests.ha_tools import Group, descendants, thaw  # imports test modules' helpers

    made: list[Group] = []

    def make(doc: dict[str, Any], size: int) -> Group:
        base = tmp_path / f"group{len(made)}"
        base.mkdir()
        group = Group(doc, base, size)
        made.append(group)
        return group

    yield make
    for group in made:
        try:
            for proc in group.procs:
                if proc.proc is not None and proc.proc.poll() is None:
                    thaw(descendants(proc.proc.pid))  # a stopped process cannot stop cleanly
        finally:
            group.stop_all()
