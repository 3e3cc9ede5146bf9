"""gtidmark taking over from Debezium offsets written inside a transaction (`event`/`row`).

The offsets value is the one Debezium's BinlogOffsetContext writes with a change record
in the middle of a transaction: the GTID position before it, `event` the binlog events of
the transaction completed (its BEGIN first), `row` the rows of the event in progress sent.
The event count comes from the replica's own binlog (SHOW BINLOG EVENTS), as Debezium's
stream carries it: MariaDB sends ANNOTATE_ROWS only to a client that asks (Debezium asks
with include.query=true), MySQL sends ROWS_QUERY whenever the binlog has it.
"""

from __future__ import annotations

import json
from pathlib import Path

from connector.settings.parse import parse_config
from tests.connector_tools import SourcePair, connector_document, streaming_connector
from tests.integration.test_streaming import wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, create_topic, produce

BIG_TX = ["INSERT INTO t VALUES (1, 'a')", "INSERT INTO t VALUES (2, 'b'), (3, 'c')",
          "INSERT INTO t VALUES (4, 'd')"]


def replica_position(pair: SourcePair) -> tuple[str, str, int]:
    """The replica's GTID position and binlog file/pos now (nothing in flight)."""
    replica = pair.replica
    gtids = replica.execute("SELECT @@global.gtid_executed" if pair.flavour == "mysql"
                            else "SELECT @@global.gtid_binlog_pos")[0][0]
    file, pos = replica.execute(replica.binlog_status)[0][:2]
    return str(gtids).replace("\n", ""), str(file), int(pos)


def second_rows_event(pair: SourcePair, file: str, pos: int) -> int:
    """The number Debezium gives the big transaction's second rows event: events since its
    BEGIN (MySQL's BEGIN query, MariaDB's GTID event), the BEGIN being 0."""
    kinds = [str(row[2]) for row in
             pair.replica.execute(f"SHOW BINLOG EVENTS IN '{file}' FROM {pos}")]
    begin = 1 if pair.flavour == "mysql" else 0  # MySQL: the Gtid event, then BEGIN
    assert kinds[0] == "Gtid", kinds
    events = [kind for kind in kinds[begin:kinds.index("Xid")] if kind != "Annotate_rows"]
    rows = [i for i, kind in enumerate(events) if kind.startswith("Write_rows")]
    assert len(rows) == 3, events
    return rows[1]


def test_a_resume_inside_a_transaction_repeats_none_of_it(
        source: SourcePair, broker: Broker, unique_name: str, tmp_path: Path) -> None:
    db = unique_name
    source.primary.execute(f"CREATE DATABASE {db}")
    source.primary.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(5))")
    source.wait_synced()
    gtids, file, pos = replica_position(source)
    conn = source.primary.root(db)
    try:
        with conn.cursor() as cur:
            cur.execute("BEGIN")
            for statement in BIG_TX:
                cur.execute(statement)
            cur.execute("COMMIT")
    finally:
        conn.close()
    source.primary.execute(f"INSERT INTO {db}.t VALUES (5, 'e')")
    source.wait_synced()
    event = second_rows_event(source, file, pos)
    # What Debezium wrote with the record of row 2, the first of the second rows event.
    debezium = {"ts_sec": 1, "file": file, "pos": pos, "gtids": gtids, "event": event,
                "row": 1, "server_id": 1}
    doc = connector_document(source, broker, db)
    config = parse_config(doc)
    create_topic(broker.bootstrap, config.offsets_topic, config={"cleanup.policy": "compact"})
    key = json.dumps([config.name, {"server": config.topic_prefix}], separators=(",", ":"))
    produce(broker.bootstrap, config.offsets_topic,
            [(key.encode(), json.dumps(debezium).encode())])
    with streaming_connector(doc, tmp_path) as proc:
        wait_caught_up(source, broker, doc, timeout=60)
        assert proc.stop() == 0
    ids = [json.loads(m.value())["payload"]["after"]["id"]
           for m in consume_all(broker.bootstrap, f"{db}.{db}.t") if m.value() is not None]
    assert ids == [3, 4, 5]  # 1 and 2 were Debezium's
    assert f"(offsets event={event} row=1)" in proc.log()
