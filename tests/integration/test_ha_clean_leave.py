"""A leader stopped cleanly (SIGTERM, a rolling restart) hands the lease over early.

A clean stop flushes and commits, then leaves the leader group, so a standby need not
wait for the group's session timeout as after a crash (measured with a 20 s session: a
SIGKILLed leader's successor took 29 s, a SIGTERMed one's 12-14 s, the rest being the
test broker's rebalance).
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.connector_tools import connector_document
from tests.integration.test_ha import Group, wait_covered
from tests.integration.test_snapshot import Writer, compare, make_table
from tests.kafka_services import Broker
from tests.services import MariaDbPair

SESSION_MS = 20_000  # a takeover after a silent loss of the leader takes longer
KEYS = 1_000


def test_a_leader_stopped_cleanly_hands_over_the_lease_before_its_session_timeout_losing_nothing(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    make_table(mariadb, db, 1)
    mariadb.primary.execute(f"DELETE FROM {db}.big")  # every row is the writer's, streamed
    doc = connector_document(mariadb, broker, db, ha__session__timeout__ms=str(SESSION_MS))
    group = Group(doc, tmp_path, 2)
    writer = Writer(mariadb, db, "big", KEYS, seed=23, per_second=100)
    try:
        group.start()
        first = group.wait_epoch_above(broker, 0)
        writer.start()
        group.wait_committed_in_epoch(broker, first)  # streaming, not only claimed
        old = group.by_pid(first["writer"]["pid"])
        began = time.monotonic()
        assert old.stop(timeout=SESSION_MS / 1000 + 30) == 0
        stopped = time.monotonic() - began
        leader = group.wait_epoch_above(broker, first["epoch"], timeout=SESSION_MS / 1000 + 60)
        handover = time.monotonic() - began
        assert leader["writer"]["pid"] != first["writer"]["pid"]
        group.wait_committed_in_epoch(broker, leader)
        writes = writer.stop()
        wait_covered(mariadb, broker, doc)
        print(f"\nclean leave: leader stopped in {stopped:.1f}s, new epoch after "
              f"{handover:.1f}s (session timeout {SESSION_MS / 1000:.0f}s), {writes} writes")
        compare(mariadb, broker, db, "big", ["id"])
    finally:
        if writer.is_alive():
            writer.stop()
        group.stop_all()
    assert handover < SESSION_MS / 1000, \
        f"the standby took over {handover:.1f}s after SIGTERM: the lease waited for the " \
        f"group's session timeout ({SESSION_MS / 1000:.0f}s) instead of a clean leave"
