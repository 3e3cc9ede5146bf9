"""A snapshot on a replica whose binlog holds a GTID domain of its own (#22).

A logged write on the replica itself (ANALYZE TABLE without NO_WRITE_TO_BINLOG, a user
change, anything a privileged session runs there) goes to its binlog in the replica's own
domain, which `@@gtid_slave_pos`, the snapshot's low watermark, never holds. The stream
position does: the low watermark never covered it, every chunk was selected again and the
snapshot never ended (measured: 0 rows out, one "keeps lagging" warning per 50 SELECTs).
MySQL's `gtid_executed` holds the replica's own writes, but not GTIDs a position carries
from another server (offsets written while reading it): the same loop there.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pymysql

from connector.flavours import MYSQL
from connector.gtid import GtidSet, MariaDbGtidPos
from connector.offsets.store import offset_key
from connector.settings.parse import parse_config
from connector.snapshot.window import ChunkWindow
from tests.connector_tools import ConnectorProcess, connector_document
from tests.integration.test_snapshot import Writer, compare, make_table, proc_doc, signal, start
from tests.integration.test_streaming import committed_offsets, wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import create_topic, produce
from tests.mysql_services import MySqlPair
from tests.services import MariaDbPair, ServiceError

LOCAL_DOMAIN = 77  # not the replication's (0): strict mode would stop the applier there
ROWS = 5_000
SMALL_ROWS = 1_000
SNAPSHOT_SECONDS = 60  # 10 chunks of 500 rows; a few seconds on a quiet machine


def test_snapshot_completes_on_a_replica_with_a_logged_write_of_its_own(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    db = unique_name
    make_table(mariadb, db, ROWS)
    replica = mariadb.replica.root()
    try:
        with replica.cursor() as cur:
            cur.execute(f"SET SESSION gtid_domain_id = {LOCAL_DOMAIN}")
            cur.execute(f"ANALYZE TABLE {db}.big")  # logged: the replica's own GTID
            cur.execute("SELECT @@global.gtid_binlog_pos, @@global.gtid_slave_pos")
            binlog_pos, slave_pos = cur.fetchone()
    finally:
        replica.close()
    assert MariaDbGtidPos.parse(binlog_pos).get(LOCAL_DOMAIN) is not None, binlog_pos
    assert MariaDbGtidPos.parse(slave_pos).get(LOCAL_DOMAIN) is None, slave_pos
    proc = start(mariadb, broker, db, tmp_path, connector,
                 incremental__snapshot__chunk__size="500")
    writer = Writer(mariadb, db, "big", ROWS, seed=22, per_second=200)
    writer.start()
    started = time.monotonic()
    try:
        signal(proc, "execute-snapshot", tables=[f"{db}.big"])
        try:
            proc.wait_log(f"snapshot of {db}.big complete", timeout=SNAPSHOT_SECONDS)
        except ServiceError:
            lagging = proc.log().count("keeps lagging the stream position")
            raise AssertionError(
                f"the snapshot of {ROWS} rows did not complete in {SNAPSHOT_SECONDS}s with "
                f"domain {LOCAL_DOMAIN} in the replica's binlog only: {lagging} 'low watermark "
                "keeps lagging' warnings (every chunk selected again)") from None
    finally:
        writes = writer.stop()
    elapsed = time.monotonic() - started
    wait_caught_up(mariadb, broker, proc_doc(proc))
    envelopes = compare(mariadb, broker, db, "big", ["id"])
    reads = [e for e in envelopes if e["op"] == "r"]
    assert writes > 50, writes  # the windows had concurrent changes to drop rows for
    assert len(reads) > ROWS // 2, len(reads)
    print(f"snapshot of {ROWS} rows with a local domain: {elapsed:.1f}s, {writes} writes, "
          f"{len(reads)} rows read")


def test_mysql_low_watermark_covers_gtids_of_a_position_the_replica_never_had(
        mysql: MySqlPair) -> None:
    """The watermark reads of a chunk on the MySQL replica, as the CDC user, for a stream
    position with a UUID the replica never executed: L covers it, so a window can open."""
    elsewhere = GtidSet.parse("024da167-0c0c-11e8-8442-00059a3c7b00:1-42")
    conn = pymysql.connect(**mysql.cdc_settings(), autocommit=True)
    try:
        with conn.cursor() as cur:
            streamed = MYSQL.current_position(cur) | elsewhere
            low = MYSQL.read_low(cur, streamed)
            high = MYSQL.read_high(cur)
    finally:
        conn.close()
    assert isinstance(low, GtidSet) and isinstance(high, GtidSet)
    assert ChunkWindow("d.t", {}, low, high).safe_to_open(streamed), (low, streamed)
    assert not high.intersection(elsewhere)  # none of them is the replica's


def test_snapshot_completes_from_a_hand_set_position_that_lacks_the_replicas_own_domain(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    """Offsets set by hand (a REST PATCH, a migrated Debezium offset) without the domain of
    the replica's own writes in an earlier binlog file: the high watermark (gtid_binlog_pos)
    holds that domain, so a stream that never brought its GTID would close no chunk window.
    The server sends a domain the dump position lacks from its first event, so it does."""
    db = unique_name
    make_table(mariadb, db, SMALL_ROWS)
    replica = mariadb.replica.root()
    try:
        with replica.cursor() as cur:
            cur.execute(f"SET SESSION gtid_domain_id = {LOCAL_DOMAIN}")
            cur.execute(f"ANALYZE TABLE {db}.big")  # the replica's own GTID, before the start
            cur.execute("FLUSH BINARY LOGS")  # ... in an earlier binlog file than the start
            cur.execute("SELECT @@global.gtid_binlog_pos")
            binlog_pos = MariaDbGtidPos.parse(cur.fetchone()[0])
    finally:
        replica.close()
    hand_set = ",".join(str(g) for g in binlog_pos if g.domain != LOCAL_DOMAIN)
    doc = connector_document(mariadb, broker, db, incremental__snapshot__chunk__size="500")
    config = parse_config(doc)
    create_topic(broker.bootstrap, config.offsets_topic, 1, {"cleanup.policy": "compact"})
    produce(broker.bootstrap, config.offsets_topic,
            [(offset_key(config), json.dumps({"gtids": hand_set}).encode())])
    proc = ConnectorProcess(doc, tmp_path)
    connector.append(proc)
    proc.start()
    proc.wait_log("binlog stream open")
    assert f"offsets written by Debezium: gtids={hand_set!r}" in proc.log()
    signal(proc, "execute-snapshot", tables=[f"{db}.big"])
    try:
        proc.wait_log(f"snapshot of {db}.big complete", timeout=SNAPSHOT_SECONDS)
    except ServiceError:
        raise AssertionError(
            f"the snapshot of {SMALL_ROWS} rows did not complete in {SNAPSHOT_SECONDS}s from "
            f"a hand-set position {hand_set!r} without domain {LOCAL_DOMAIN} of the replica's "
            f"binlog position {binlog_pos}: {proc.log()[-1500:]}") from None
    wait_caught_up(mariadb, broker, proc_doc(proc))
    reads = [e for e in compare(mariadb, broker, db, "big", ["id"]) if e["op"] == "r"]
    assert len(reads) == SMALL_ROWS, len(reads)
    committed = committed_offsets(broker, proc_doc(proc))
    assert committed is not None
    streamed = MariaDbGtidPos.parse(committed["gtids"])
    assert streamed.covers(binlog_pos), (streamed, binlog_pos)  # the server sent domain 77
