"""Encoding rows/s: the compiled record writers against the Python ones they replaced.

No services: the rows of `bench/stream.py`'s table (as the binlog decodes them) are encoded
in this process as the dispatcher does, key and value per row, JSON with schemas, then
Confluent Avro (a fixed schema id, no registry), by
  python    -- the Python writer (tests/reference_encoder.py; for Avro tests/reference_avro.py:
               payload dicts written by fastavro), one call per record;
  per row   -- the compiled writer, one call per record (`TableEncoder.key` / `value`);
  per event -- the compiled writer, one call per rows event (`TableEncoder.records`).
Bulk events hold 2,000 rows (as `bench/stream.py`'s bulk inserts), small ones 2. CPU time,
best of `BENCH_ROUNDS` (default 7) rounds interleaved, so a loaded machine's ratios hold.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from connector.events import EventEncoder, SourceInfo, TableEncoder
from connector.schema import Column, TableSchema
from connector.settings.model import AVRO_CONVERTER
from connector.settings.parse import parse_config
from tests.reference_avro import ReferenceAvro
from tests.reference_encoder import ReferenceEncoder

ROWS = 20_000
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "7"))
TABLE = TableSchema("bench", "t", (  # bench/stream.py's TABLE
    Column("id", "bigint", nullable=False), Column("a", "int", nullable=False),
    Column("b", "varchar", length=40, charset="utf8mb4"),
    Column("c", "decimal", precision=12, scale=2), Column("d", "datetime", scale=3),
    Column("e", "text", charset="utf8mb4")), ("id",))


def rows() -> list[dict[str, Any]]:
    start = dt.datetime(2024, 1, 1, 0, 0, 0, 123000)
    return [{"id": i, "a": i % 1000, "b": f"name-{i}", "c": Decimal(i) / 100,
             "d": start + dt.timedelta(seconds=i), "e": "x" * 20} for i in range(1, ROWS + 1)]


AVRO = {"key.converter": AVRO_CONVERTER, "value.converter": AVRO_CONVERTER}


def main() -> int:
    data = rows()
    for name, converters in (("JSON-with-schema", {}), ("Confluent Avro", AVRO)):
        config = parse_config({"name": "bench", "config": {
            "database.hostname": "h", "database.user": "u", "database.server.id": 5,
            "topic.prefix": "bench", "bootstrap.servers": "b", **converters}})
        enc = EventEncoder(config, schema_ids=lambda subject, schema: 1).table(TABLE)
        ref: ReferenceEncoder | ReferenceAvro = ReferenceAvro(
            config, enc, lambda subject, schema: 1) if converters else \
            ReferenceEncoder(config, enc)
        compare(name, enc, ref, data)
    return 0


def compare(converter: str, enc: TableEncoder, ref: ReferenceEncoder | ReferenceAvro,
            data: list[dict[str, Any]]) -> None:
    """One table of timings: the three writers over `data`, bulk and small events."""
    source = SourceInfo(ts_us=1_700_000_000_000_000, db="bench", table="t", server_id=1,
                        gtid="0-1-42", file="binlog.000002", pos=4711, row=0, thread=9,
                        query=None)
    ts_ms = 1_700_000_000_000

    # Records are dropped once written, as the dispatcher hands each on (`out` keeps them
    # for the check that all three agree).
    def per_record(key: Callable[[Any], Any], value: Callable[..., bytes],
                   size: int) -> Callable[[list[Any] | None], None]:
        def run(out: list[Any] | None) -> None:
            for lo in range(0, ROWS, size):
                for index, row in enumerate(data[lo:lo + size]):
                    source.row = index
                    record = key(row), value("c", None, row, source, ts_ms, None)
                    if out is not None:
                        out.append(record)
        return run

    def per_event(size: int) -> Callable[[list[Any] | None], None]:
        def run(out: list[Any] | None) -> None:
            for lo in range(0, ROWS, size):
                for record in enc.records("c", data[lo:lo + size], source, ts_ms, None):
                    if out is not None:
                        out.append(record)
        return run

    print(f"\n{ROWS:,} rows of bench/stream.py's table, key + {converter} value "
          f"({len(enc.value('c', None, data[0], source, ts_ms))} bytes), CPU us per row, "
          f"best of {ROUNDS}")
    print("| events | python | per row | per event | per event / python |")
    print("|---|---:|---:|---:|---:|")
    for name, size in (("bulk (2,000 rows)", 2000), ("small (2 rows)", 2)):
        runs = {"python": per_record(ref.key, ref.value, size),
                "per row": per_record(enc.key, enc.value, size), "per event": per_event(size)}
        last: list[list[Any]] = [[] for _ in runs]
        for run, out in zip(runs.values(), last, strict=True):
            run(out)
        assert all(out == last[0] for out in last), "the writers disagree"
        best = dict.fromkeys(runs, float("inf"))
        for _ in range(ROUNDS):
            for label, run in runs.items():
                began = time.process_time()
                run(None)
                best[label] = min(best[label], time.process_time() - began)
        us = {label: t / ROWS * 1e6 for label, t in best.items()}
        print(f"| {name} | {us['python']:.2f} | {us['per row']:.2f} | {us['per event']:.2f} | "
              f"{us['python'] / us['per event']:.1f}x faster |")


if __name__ == "__main__":
    raise SystemExit(main())
