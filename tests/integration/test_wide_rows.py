"""Wide rows keep the connector's memory bounded in bytes, streaming and snapshotting.

Rows of 256 KB: a queue or a chunk bounded in rows only holds gigabytes of them (a snapshot
of 300 MB of them and then a 300 MB transaction grew the connector by ~900 MB, its chunk
reader by ~800 MB and its binlog reader by ~600 MB). Bounded in bytes, each process stays
within 250 MB of where it started, whatever the transaction's or table's size.
"""

from __future__ import annotations

from pathlib import Path

from connector.settings.parse import parse_config
from signals.send import build_signal, send_signal
from tests.connector_tools import connector_document, streaming_connector
from tests.integration.test_streaming import wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import high_watermark
from tests.process_memory import peaks_mb
from tests.services import MariaDbPair, wait_for

ROW_BYTES = 256 * 1024
ROWS = 1_200  # 300 MB
GROWTH_MB = 250  # what any of the processes may grow by (~190 at most here); rows-only: 600-900


def fill(mariadb: MariaDbPair, db: str, first: int, rows: int) -> None:
    mariadb.primary.execute(
        f"INSERT INTO {db}.t SELECT seq, REPEAT(CHAR(65 + seq % 26), {ROW_BYTES}) "
        f"FROM {db}.seq_{first}_to_{first + rows - 1}")


def test_wide_rows_are_bounded_in_bytes_streaming_and_snapshotting(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    mariadb.primary.execute(f"CREATE DATABASE {db}")
    mariadb.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v LONGTEXT)")
    fill(mariadb, db, 1, ROWS)  # for the snapshot
    mariadb.wait_synced()
    topic = f"{db}.{db}.t"
    doc = connector_document(mariadb, broker, db)
    with streaming_connector(doc, tmp_path) as proc:
        assert proc.proc is not None
        fill(mariadb, db, 100_001, 4)  # warm-up: topic, encoders, producer buffers
        wait_for(lambda: high_watermark(broker.bootstrap, topic) >= 4, 60, "the warm-up records")
        before = peaks_mb(proc.proc.pid)

        send_signal(parse_config(doc), build_signal("execute-snapshot", tables=[f"{db}.t"]))
        snapshot = ROWS + 4  # the table's rows, the warm-up's included
        wait_for(lambda: high_watermark(broker.bootstrap, topic) >= 4 + snapshot, 600, "the snapshot's records")
        fill(mariadb, db, 200_001, ROWS)  # one 300 MB transaction
        wait_caught_up(mariadb, broker, doc, timeout=600)
        assert high_watermark(broker.bootstrap, topic) == 4 + snapshot + ROWS
        after = peaks_mb(proc.proc.pid)
    parent = proc.proc.pid
    assert set(after) - {parent}, "the reader processes were not found"
    growth = {("connector" if p == parent else f"child {p}"): after[p] - before.get(p, 0.0)
              for p in after}
    print(f"peak RSS growth, MB: {growth}")
    assert max(growth.values()) < GROWTH_MB, growth

