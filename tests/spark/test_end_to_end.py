"""The whole pipeline: connector -> Kafka -> `spark-apply --once` -> Iceberg equals the primary.

Rows written before the connector starts (snapshot.mode=no_data) reach Kafka only through
the incremental snapshot signalled mid-workload, so the tables can only match if the
snapshot, the streamed changes (PK updates, deletes, an ADD COLUMN) and the MERGEs are right.
Renames and a drop at the end reach the table only if the job follows the schema-change topic.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.types import TimestampType

from connector.settings.parse import parse_config
from signals.send import build_signal, send_signal
from tests.connector_tools import ConnectorProcess, SourcePair, connector_document, source_rows
from tests.integration.test_streaming import as_int64, wait_caught_up
from tests.kafka_services import Broker
from tests.spark.helpers import apply_once
from tests.workload import TABLES, Workload

pytestmark = pytest.mark.spark

EPOCH = dt.datetime(1970, 1, 1)


def iceberg_rows(spark: SparkSession, table: str, key: list[str]) -> dict[str, dict[str, Any]]:
    """The Iceberg table keyed like `source_rows`; timestamps back as naive UTC datetimes."""
    frame = spark.table(table)
    stamps = {f.name for f in frame.schema.fields if isinstance(f.dataType, TimestampType)}
    exprs = [f"unix_micros(`{f.name}`) AS `{f.name}`" if f.name in stamps else f"`{f.name}`"
             for f in frame.schema.fields]
    out = {}
    for record in frame.selectExpr(*exprs).collect():
        row = record.asDict()
        for name in stamps:
            if row[name] is not None:
                row[name] = EPOCH + dt.timedelta(microseconds=row[name])
        out[json.dumps({k: row[k] for k in key}, sort_keys=True)] = row
    return out


# Renames (both spellings) and a drop, each followed by changes: records before a DDL carry the
# old columns, records after it the new ones. Then a TRUNCATE (a t record, skipped.operations
# none) between changes: the table keeps only the rows written after it.
COLUMN_DDL = [
    "ALTER TABLE {db}.orders RENAME COLUMN flags TO bits",
    "UPDATE {db}.orders SET bits = 7 WHERE MOD(id, 3) = 0",
    "ALTER TABLE {db}.orders CHANGE status state VARCHAR(10)",
    "UPDATE {db}.orders SET state = 'late' WHERE MOD(id, 5) = 0",
    "ALTER TABLE {db}.customers DROP COLUMN balance",
    "INSERT INTO {db}.customers VALUES ('after-drop', 'new')",
    "UPDATE {db}.customers SET code = 'renamed' WHERE code = 'after-drop'",
    "TRUNCATE TABLE {db}.customers",
    "INSERT INTO {db}.customers VALUES ('after-truncate', 'newer')",
]


def change_columns(source: SourcePair, db: str) -> None:
    conn = source.primary.root(autocommit=True)
    try:
        with conn.cursor() as cur:
            for sql in COLUMN_DDL:
                cur.execute(sql.format(db=db))
    finally:
        conn.close()


def test_workload_with_snapshot_and_column_ddl_lands_in_iceberg_equal_to_primary(
        spark: SparkSession, source: SourcePair, broker: Broker, unique_name: str,
        tmp_path: Path) -> None:
    db = unique_name
    workload = Workload(source, db, seed=41)
    workload.create()
    workload.run(1500, add_column_at=None)  # before the connector: only the snapshot has these
    source.wait_synced()
    doc = connector_document(source, broker, db, incremental__snapshot__chunk__size="200",
                             skipped__operations="none")
    conn = ConnectorProcess(doc, tmp_path)
    conn.start()
    try:
        conn.wait_log("streaming from")
        workload.run(1000, add_column_at=None)
        send_signal(parse_config(doc),
                    build_signal("execute-snapshot", tables=[f"{db}.{t}" for t in TABLES]))
        workload.run(2500, add_column_at=0.3)  # while the snapshot runs, DDL included
        for table in TABLES:
            conn.wait_log(f"snapshot of {db}.{table} complete", timeout=120)
        workload.close()
        change_columns(source, db)
        wait_caught_up(source, broker, doc)
        assert conn.stop() == 0
    finally:
        conn.ensure_stopped()

    job = apply_once(spark, broker.bootstrap, [f"{db}.{db}.{t}" for t in TABLES], db, tmp_path)
    assert job.dead_letters == 0
    assert workload.added_column
    compared = 0
    for table, (_, key) in TABLES.items():
        expected = source_rows(source, db, table, key)
        actual = iceberg_rows(spark, f"gtidmark.{db}.{table}", key)
        if table == "orders":
            # BIGINT UNSIGNED is int64 on the wire (Debezium's default): two's complement.
            for row in expected.values():
                row["bits"] = as_int64(row["bits"])
            assert "note" in spark.table(f"gtidmark.{db}.orders").columns
            assert any(row["note"] == "touched" for row in actual.values())
        columns = spark.table(f"gtidmark.{db}.{table}").columns
        assert sorted(columns) == sorted(next(iter(expected.values()))), table
        missing, extra = expected.keys() - actual.keys(), actual.keys() - expected.keys()
        assert not missing and not extra, \
            f"{table}: missing {sorted(missing)[:5]}, extra {sorted(extra)[:5]}"
        # A column added later is NULL in the table for rows not touched after the DDL.
        wrong = [k for k, row in expected.items()
                 if row != {c: actual[k].get(c) for c in row}]
        assert not wrong, f"{table}: {len(wrong)} rows differ, e.g. {expected[wrong[0]]} " \
            f"!= {actual[wrong[0]]}"
        compared += len(expected)
    assert compared > 1000
