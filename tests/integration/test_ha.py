"""Active-passive high availability: one leader among several `gtidmark run` processes,
takeover when it dies or is paused, and fencing of a leader that comes back."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from connector.offsets.value import SNAPSHOT_KEY
from connector.settings.parse import parse_config
from tests.connector_tools import (
    ConnectorProcess,
    SourcePair,
    connector_document,
    lease_holder,
    wait_until,
)
from tests.ha_tools import (
    SESSION_MS,
    freeze,
    leader_record,
    leading_group,
    offsets_records,
    thaw,
    thaw_until_stepped_down,
    wait_covered,
)
from tests.integration.test_snapshot import Writer, compare, make_table, signal
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic
from tests.services import MariaDbPair


def test_one_leader_and_takeovers_lose_nothing(source: SourcePair, broker: Broker,
                                               unique_name: str, group_factory: Any) -> None:
    db = unique_name
    doc, group, first = leading_group(source, broker, group_factory, db, 30_000, 3,
                                      incremental__snapshot__chunk__size="500",
                                      incremental__snapshot__chunk__delay__ms="50")
    writer = Writer(source, db, "big", 30_000, seed=11, per_second=200)
    writer.start()
    takeovers: list[float] = []
    try:
        signal(group.procs[0], "execute-snapshot", tables=[f"{db}.big"])
        leader = first
        for round_ in range(6):  # three kills, three freezes
            old_pid = leader["writer"]["pid"]
            old = group.by_pid(old_pid)
            time.sleep(1.0)
            began = time.monotonic()
            assert old.proc is not None
            if round_ % 2 == 0:
                old.kill()
                old.start()  # comes back as a standby
            else:
                frozen = freeze(old)  # a zombie-to-be
            leader = group.wait_epoch_above(broker, leader["epoch"])
            takeovers.append(time.monotonic() - began)
            leader = group.wait_committed_in_epoch(broker, leader)  # not only its claim
            if round_ % 2 == 1:
                thaw(frozen)  # must step down, not commit
            assert leader["writer"]["pid"] != old_pid
        # Done when the leader's committed offsets hold no snapshot any more.
        wait_until(lambda: (r := leader_record(offsets_records(broker, doc))) is not None
                   and r["signal_offset"] == 1 and not r[SNAPSHOT_KEY], 300,
                   "the snapshot committed as finished")
    finally:
        writer.stop()
    wait_covered(source, broker, doc)
    envelopes = compare(source, broker, db, "big", ["id"])
    logs = group.logs()
    # The signal acted on exactly once: its effect committed once (signal position and
    # snapshot move forward together, never back), one snapshot run completed.
    records = offsets_records(broker, doc)
    positions = [r["signal_offset"] for r in records]
    assert positions == sorted(positions) and positions[-1] == 1
    snapshot_ids = set(re.findall(r"snapshot ([0-9a-f-]{36})", logs))
    assert len(snapshot_ids) == 1  # a leader killed mid-way is resumed, never restarted
    # The snapshot ran (#32: a takeover while acting on the signal dropped it, and "finished"
    # was committed with 19,949 rows never sent): its finished line, and every key the
    # writer never touched (no change record) arrived as a read.
    assert f"snapshot {snapshot_ids.pop()} finished" in logs
    changed = {e["after"]["id"] if e["after"] else e["before"]["id"]
               for e in envelopes if e["op"] != "r"}
    read = {e["after"]["id"] for e in envelopes if e["op"] == "r"}
    untouched = set(range(1, 30_001)) - changed
    assert len(untouched) > 1_000 and not untouched - read, \
        f"{len(untouched - read)} of {len(untouched)} keys the writer never touched were " \
        "not read by the snapshot"
    newest = leader_record(records)
    assert newest is not None
    live = group.by_pid(newest["writer"]["pid"])
    assert live.proc is not None and live.proc.poll() is None
    # One writer per epoch commits past its start record: the epoch's first writer.
    epochs = Counter((r["epoch"], r["writer"]["pid"]) for r in records)
    first = {r["epoch"]: r["writer"]["pid"] for r in reversed(records)}
    assert all(pid == first[epoch] for (epoch, pid), n in epochs.items() if n > 1), \
        "two writers committed in one epoch"
    streamed = [(e["source"]["gtid"], e["source"]["row"], e["op"], json.dumps(e["after"]))
                for e in envelopes if e["op"] != "r"]
    duplicates = len(streamed) - len(set(streamed))
    print(f"\nHA: takeover median {statistics.median(takeovers):.1f}s max "
          f"{max(takeovers):.1f}s over {len(takeovers)}; duplicate change records "
          f"{duplicates} ({duplicates / len(takeovers):.0f} per takeover); rows lost 0")


def test_paused_leader_is_fenced_when_it_resumes(mariadb: MariaDbPair, broker: Broker,
                                                 unique_name: str, group_factory: Any) -> None:
    db = unique_name
    doc, group, first = leading_group(mariadb, broker, group_factory, db, 100)
    zombie = group.by_pid(first["writer"]["pid"])
    frozen = freeze(zombie)
    second = group.wait_epoch_above(broker, first["epoch"])
    mariadb.primary.execute(f"UPDATE {db}.big SET v = v + 1 WHERE id <= 50")
    wait_covered(mariadb, broker, doc)
    seen = len(offsets_records(broker, doc))
    mark = thaw_until_stepped_down(zombie, frozen)
    zombie.wait_log("standby: waiting for the lease", after=mark, timeout=30)
    mariadb.primary.execute(f"UPDATE {db}.big SET v = v + 1 WHERE id > 50")
    wait_covered(mariadb, broker, doc)
    late = offsets_records(broker, doc)[seen:]
    assert late and all(r["epoch"] == second["epoch"] for r in late)
    assert all(r["writer"]["pid"] == second["writer"]["pid"] for r in late)
    compare(mariadb, broker, db, "big", ["id"])
    status = subprocess.run([sys.executable, "-m", "connector.cli", "status", "--json",
                             "--config", str(zombie.config_path)], capture_output=True,
                            text=True, timeout=60, check=True)
    active = json.loads(status.stdout)["active"]
    assert (active["pid"], active["epoch"]) == (second["writer"]["pid"], second["epoch"])


def test_broker_paused_longer_than_the_lease(mariadb: MariaDbPair, broker: Broker,
                                             unique_name: str, group_factory: Any) -> None:
    db = unique_name
    doc, group, _ = leading_group(mariadb, broker, group_factory, db, 100)
    writer = Writer(mariadb, db, "big", 100, seed=3, per_second=50)
    writer.start()
    try:
        time.sleep(1)
        broker.pause()
        try:
            time.sleep(SESSION_MS / 1000 * 3)
        finally:
            broker.resume()
        time.sleep(SESSION_MS / 1000 * 2)
    finally:
        writer.stop()
    wait_covered(mariadb, broker, doc)
    compare(mariadb, broker, db, "big", ["id"])
    records = offsets_records(broker, doc)
    writers_per_epoch: dict[int, set[int]] = {}
    for record in records:
        writers_per_epoch.setdefault(record["epoch"], set()).add(record["writer"]["pid"])
    assert all(len(pids) == 1 for pids in writers_per_epoch.values()), writers_per_epoch
    alive = [p for p in group.procs if p.proc is not None and p.proc.poll() is None]
    assert len(alive) == 2


def test_lone_instance_outlives_a_broker_outage_longer_than_its_start_timeouts(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, group_factory: Any) -> None:
    """The default deployment, one instance with HA on: its records time out (half the
    session), it steps down and waits as a standby for a fresh lease while the broker is
    away (longer than its 30 s start timeouts); it must not exit, and must lose nothing."""
    db = unique_name
    doc, group, _ = leading_group(mariadb, broker, group_factory, db, 100, size=1)
    lone = group.procs[0]
    writer = Writer(mariadb, db, "big", 100, seed=5, per_second=50)
    writer.start()
    try:
        wait_covered(mariadb, broker, doc)  # its topic exists: records are in flight next
        mark = len(lone.log())
        broker.pause()
        try:
            lone.wait_log("stepping down to standby", after=mark, timeout=30)
            lone.wait_log("standby: waiting for the lease", after=mark, timeout=30)
            time.sleep(35)  # the outage outlasts the start's 30 s timeouts
        finally:
            broker.resume()
        standby = mark + lone.log()[mark:].index("standby: waiting for the lease")
        lone.wait_log("active: epoch", after=standby, timeout=60)  # a fresh lease
    finally:
        writer.stop()
    wait_covered(mariadb, broker, doc)
    compare(mariadb, broker, db, "big", ["id"])
    assert lone.proc is not None and lone.proc.poll() is None


def test_records_queued_by_a_frozen_leader_never_land_after_the_new_leaders(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, group_factory: Any) -> None:
    """A leader frozen with records still in its producer's queue must not send them when
    it resumes: they would land after the new leader's newer row images and win."""
    db = unique_name
    doc, group, first = leading_group(mariadb, broker, group_factory, db, 30_000)
    zombie = group.by_pid(first["writer"]["pid"])
    # With the broker paused, a few produce requests go into the socket (the broker reads
    # them when it resumes, before anything newer); the rest stay in the producer's queue.
    broker.pause()
    try:
        mariadb.primary.execute(f"UPDATE {db}.big SET v = 1, s = 'stale'")
        mariadb.wait_synced()
        time.sleep(2.0)  # the leader reads the binlog and queues the 30,000 records
        frozen = freeze(zombie)
    finally:
        broker.resume()
    second = group.wait_epoch_above(broker, first["epoch"])
    group.wait_committed_in_epoch(broker, second)
    mariadb.primary.execute(f"UPDATE {db}.big SET v = 2, s = 'fresh'")
    wait_covered(mariadb, broker, doc)
    thaw_until_stepped_down(zombie, frozen)
    time.sleep(2.0)  # anything the zombie still sends lands by now
    envelopes = compare(mariadb, broker, db, "big", ["id"])
    stale_after_fresh = [e for e in envelopes[next(
        i for i, e in enumerate(envelopes) if (e["after"] or {}).get("s") == "fresh"):]
        if (e["after"] or {}).get("s") == "stale"]
    assert not stale_after_fresh, f"{len(stale_after_fresh)} stale records after the new ones"


def test_a_first_start_after_a_wait_for_the_lease_misses_nothing_sent_meanwhile(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    """Launched while another member holds the lease: rows written and a snapshot signal
    sent during the wait are streamed and acted on once the instance gets the lease and
    starts for the first time (snapshot.mode=no_data, nothing committed before)."""
    db = unique_name
    make_table(mariadb, db, 2_000)
    doc = connector_document(mariadb, broker, db, ha__session__timeout__ms=str(SESSION_MS),
                             snapshot__mode="no_data")
    config = parse_config(doc)
    create_topic(broker.bootstrap, config.signal_kafka_topic, 1)
    proc = ConnectorProcess(doc, tmp_path)
    with lease_holder(broker.bootstrap, config.name, config.signal_kafka_topic,
                      SESSION_MS) as holder:
        try:
            proc.start()
            proc.wait_log("standby: waiting for the lease")
            mariadb.primary.execute(f"INSERT INTO {db}.big VALUES (5001, 1, 'while waiting', 1)")
            signal(proc, "execute-snapshot", tables=[f"{db}.big"])
            holder.kill()  # the lease passes to the instance, which starts for the first time
            holder.wait(30)
            proc.wait_log(f"snapshot of {db}.big complete", timeout=120)
            mariadb.primary.execute(f"INSERT INTO {db}.big VALUES (5002, 2, 'after the start', 2)")
            wait_covered(mariadb, broker, doc)
            compare(mariadb, broker, db, "big", ["id"])
            assert "streaming from the position at launch" in proc.log()
        finally:
            proc.ensure_stopped()
