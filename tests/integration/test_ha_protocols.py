"""The HA lease on Apache Kafka's group coordinator with either group protocol, at the
product's default session: the classic protocol (`ha.session.timeout.ms`, 10 s) and
KIP-848's `consumer.group.protocol=consumer` (the broker's session,
`group.consumer.session.timeout.ms`, 45 s by default). A leader stopped with SIGTERM hands
the lease over at once; a SIGKILLed one's lease passes when its session expires. The
takeover times are printed (README *High availability*); nothing is lost either way.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.connector_tools import connector_document
from tests.ha_tools import wait_covered
from tests.integration.test_snapshot import Writer, compare, make_table
from tests.kafka_services import Broker
from tests.services import MariaDbPair

KEYS = 1_000


@pytest.mark.parametrize(("protocol", "killed_within"), [("classic", 30), ("consumer", 75)])
def test_takeovers_after_sigterm_and_sigkill_lose_nothing(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, group_factory: Any,
        protocol: str, killed_within: float) -> None:
    db = unique_name
    make_table(mariadb, db, 1)
    mariadb.primary.execute(f"DELETE FROM {db}.big")  # every row is the writer's, streamed
    doc = connector_document(mariadb, broker, db, **{
        "ha.session.timeout.ms": "10000", "consumer.group.protocol": protocol})
    group = group_factory(doc, 3)
    writer = Writer(mariadb, db, "big", KEYS, seed=31, per_second=100)
    try:
        group.start()
        first = group.wait_epoch_above(broker, 0)
        writer.start()
        group.wait_committed_in_epoch(broker, first)
        began = time.monotonic()
        assert group.by_pid(first["writer"]["pid"]).stop(timeout=60) == 0
        second = group.wait_epoch_above(broker, first["epoch"], timeout=60)
        handover = time.monotonic() - began
        group.wait_committed_in_epoch(broker, second)
        began = time.monotonic()
        group.by_pid(second["writer"]["pid"]).kill()
        third = group.wait_epoch_above(broker, second["epoch"], timeout=killed_within + 30)
        takeover = time.monotonic() - began
        group.wait_committed_in_epoch(broker, third)
    finally:
        writes = writer.stop()
    print(f"\n{protocol} protocol: SIGTERM handover {handover:.1f}s, SIGKILL takeover "
          f"{takeover:.1f}s", flush=True)
    wait_covered(mariadb, broker, doc)
    compare(mariadb, broker, db, "big", ["id"])
    assert writes > 100
    assert handover < 15  # a clean leave: no session to wait for
    assert takeover < killed_within
