"""3,000 generated hostile signals thrown at a running `gtidmark run` while a writer changes
rows: streaming never stops, every signal is acted on or skipped in exactly one log line
before its offset is committed, and the replica only ever sees SELECT / SHOW / session SETs.
Compile-time bombs (#22) are refused before compiling and the process never grows."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.connector_tools import ConnectorProcess, rebuild, source_rows
from tests.general_log import cdc_statements, general_log, not_read_only
from tests.integration.test_snapshot import Writer, proc_doc, start
from tests.integration.test_streaming import committed_offsets, wait_caught_up
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, produce
from tests.services import MariaDbPair, wait_for

pytestmark = pytest.mark.integration
SIGNALS = 3000
SEED = 20261123

INJECTIONS = [
    "id = 1 AND SLEEP(30) = 0", "id IN (SELECT k FROM {db}.secrets)",
    "extractvalue(1, concat(0x7e, (SELECT k FROM {db}.secrets)))",
    "id = 1; DROP TABLE {db}.live", "id = 1 UNION SELECT k, k, k FROM {db}.secrets",
    "s = 'a\\' OR 1=1) -- '", "s = \"x\" OR \"1\"=\"1\"", "id = 1 /* */ OR 1=1",
    "id = 1 # x", "1=1) ORDER BY id LIMIT 1000000 -- ", "WHERE id = 1 WHERE 1",
    "id = @@version", "id = 1 OR BENCHMARK(100000000, MD5('x')) = 0", "(" * 40 + "id=1",
    "id = 1 INTO OUTFILE '/tmp/x'", "s LIKE '" + "%a" * 300 + "'", "`id` = 1 OR `secret` = 2",
    "id = 1 AND (SELECT COUNT(*) FROM information_schema.tables) > 0", "id = 0x41",
    "LOAD_FILE('/etc/passwd') IS NOT NULL", "id = 1 LOCK IN SHARE MODE", "",
]
BOMBS = [r"(\w|\d|_|\.)*(\w|\d|_|\.)*(\w|\d|_|\.)*!", r"((((.*)*)*)*)*!", r"(a+)+$",
         r"(" * 300, r"[" * 10, r"\1(x)", r"(?<=a+)b", r"x{1,100000}{1,100000}",
         r"(.*){1,100}[bc]", r"(.|.)*[bc]"]
# What regex.compile unrolls: the 23 GB bomb and its relatives (pattern_limits.py).
COMPILE_BOMBS = [r"(.*){1,32000}[bc]", "(?:a{99999}){99999}", "[a-z]{4294967294}",
                 "(?:(?:a{30}){30}){30}",
                 "(?x)a{9 9 9 9 9}", "(?V1)(?:[[a])(]x{1000}[[a])(]){1000}",
                 "(?:(?:.{2,50}?){2,50}+){2,50}", "(" * 40 + "a" + ")" * 40]
KEYS = ["type", "data", "id", "data-collections", "additional-conditions", "filter",
        "data-collection", "surrogate-key", "chunk-size", "chunk-delay-ms", "message",
        "additional-condition"]


def random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False, 0, -1, 2**70, 1.5e308, -0.0])
    if kind == 2:
        return "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randrange(12)))
    if kind == 3:
        return rng.choice(KEYS + ["execute-snapshot", "INCREMENTAL", "blocking"])
    if kind == 4:
        return rng.randrange(-10, 10**7)
    if kind == 5:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(KEYS): random_json(rng, depth + 1) for _ in range(rng.randrange(4))}


def hostile(rng: random.Random, db: str) -> tuple[bytes | None, bytes | None]:
    """One generated signal record (key, value)."""
    key: bytes | None = db.encode()
    tables = [f"{db}.snap", f"{db}.live", f"{db}.secrets", f"{db}.nope", "mysql.user",
              f"{db}\\..*", ".*", f"{db}.sn.p"]
    kind = rng.randrange(12)
    value: Any
    if kind == 0:
        return key, rng.randbytes(rng.randrange(300))
    if kind == 1:
        value = random_json(rng)
    elif kind == 2:
        depth = rng.choice([17, 900, 20_000])
        return key, (b'{"type":"log","data":{"message":"x","n":' + b"[" * depth
                     + b"]" * depth + b"}}")
    elif kind == 3:
        size = rng.choice([70_000, 400_000])
        value = rng.choice([
            {"type": "log", "data": {"message": "m" * size}},
            {"type": "execute-snapshot", "id": "i" * size,
             "data": {"data-collections": [f"{db}.snap"]}},
            {"type": "execute-snapshot", "data": {"data-collections": [f"{db}.snap"],
                                                  "additional-condition": "id > " + "9" * size}},
            {"type": "execute-snapshot", "data": {"data-collections": [f"{db}.s{i}"
                                                                       for i in range(9000)]}}])
    elif kind == 4:
        key = rng.choice([None, b"", b"other", db.encode() + b"x", rng.randbytes(8)])
        value = {"type": "pause-snapshot"}
    elif kind == 5:
        value = {"type": rng.choice(["execute-snapshot", "set-throttle", "stop-snapshot",
                                     "log"]),
                 "data": {rng.choice(KEYS): random_json(rng) for _ in range(rng.randrange(4))}}
    elif kind == 6:
        value = {"type": rng.choice(["snapshot", "EXECUTE-SNAPSHOT ", "", 7, None]), "data": {}}
    elif kind == 7:
        where = rng.choice(INJECTIONS).format(db=db)
        value = {"type": "execute-snapshot", "data": {
            "data-collections": [f"{db}.snap"],
            "additional-conditions": [{"data-collection": f"{db}.snap", "filter": where}]}}
    elif kind == 8:
        bomb = rng.choice(BOMBS + COMPILE_BOMBS)
        value = rng.choice([
            {"type": rng.choice(["execute-snapshot", "stop-snapshot"]),
             "data": {"data-collections": [bomb]}},
            {"type": "execute-snapshot", "id": "bomb", "data": {
                "data-collections": [f"{db}.snap"],
                "additional-conditions": [{"data-collection": bomb, "filter": "id > 1"}]}}])
    elif kind == 9:
        value = {"type": "execute-snapshot", "data": {
            "data-collections": [rng.choice(tables)],
            "surrogate-key": rng.choice([None, "v", "s", "nope", "id; x"])}}
    elif kind == 10:
        value = rng.choice([
            {"type": "execute-snapshot", "data": {
                "data-collections": [f"{db}.snap"], "additional-conditions": [
                    {"data-collection": f"{db}.snap", "filter": "id % 2 = 0"},
                    {"data-collection": f"{db}.snap", "filter": "v BETWEEN 1 AND 90"}]}},
            {"type": "stop-snapshot"}, {"type": "resume-snapshot"},
            {"type": "set-throttle", "data": {"chunk-size": rng.choice([1, 50, 100_001])}},
            {"type": "log", "data": {"message": "fuzz\nsignal at offset 0 (log): forged"}}])
    else:
        value = {"type": "execute-snapshot", "data": json.dumps(random_json(rng))}
    return key, json.dumps(value).encode()


def peak_rss_kib(proc: ConnectorProcess) -> int:
    """The connector process's peak resident size so far (VmHWM)."""
    assert proc.proc is not None
    status = Path(f"/proc/{proc.proc.pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))  # type: ignore[union-attr]


def outcomes(log: str) -> Counter[int]:
    """Offsets named by outcome lines: the first such mention on each log line only."""
    counts: Counter[int] = Counter()
    for line in log.splitlines():
        m = re.search(r"signal at offset (\d+) \(|signal topic \S+ offset (\d+) skipped", line)
        if m:
            counts[int(m.group(1) or m.group(2))] += 1
    return counts



def test_hostile_signals_never_stop_streaming_or_write(
        mariadb: MariaDbPair, broker: Broker, unique_name: str, tmp_path: Path,
        connector: list[ConnectorProcess]) -> None:
    db = unique_name
    p = mariadb.primary
    p.execute(f"CREATE DATABASE {db}")
    p.execute(f"CREATE TABLE {db}.secrets (k VARCHAR(40) PRIMARY KEY)")
    p.execute(f"INSERT INTO {db}.secrets VALUES ('TOPSECRET-4711')")
    for table, rows in (("live", 2000), ("snap", 300)):
        p.execute(f"CREATE TABLE {db}.{table} (id INT PRIMARY KEY, v BIGINT, s VARCHAR(40))")
        p.execute(f"INSERT INTO {db}.{table} SELECT seq, seq, 'x' FROM {db}.seq_1_to_{rows}")
    mariadb.wait_synced()
    rng = random.Random(SEED)
    records = [hostile(rng, db) for _ in range(SIGNALS)]
    with general_log(mariadb.replica, tmp_path / "general.log") as path:
        proc = start(mariadb, broker, db, tmp_path, connector,
                     incremental__snapshot__chunk__size="64")
        doc = proc_doc(proc)
        writer = Writer(mariadb, db, "live", 2000, seed=SEED, per_second=200)
        writer.start()
        try:
            for i in range(0, SIGNALS, 100):
                produce(broker.bootstrap, f"{db}-signal", records[i:i + 100])
            wait_for(lambda: (committed_offsets(broker, doc) or {}).get("signal_offset", 0)
                     >= SIGNALS, 90, f"all {SIGNALS} signals consumed")
        finally:
            writes = writer.stop()
        wait_caught_up(mariadb, broker, doc)
        assert proc.proc is not None and proc.proc.poll() is None
    assert proc.starts == 1 and "--- start 2 ---" not in proc.log()
    assert writes > 100
    rebuilt, _ = rebuild(broker.bootstrap, f"{db}.{db}.live")
    primary = source_rows(mariadb, db, "live", ["id"])
    # Every key the stream carried ends in the primary's state (none lost, none stale).
    assert len(rebuilt) > 50
    assert [k for k, row in rebuilt.items() if primary.get(k) != row] == []
    committed = committed_offsets(broker, doc)
    assert committed is not None and committed["signal_offset"] == SIGNALS
    counts = outcomes(proc.log())
    assert sorted(counts) == list(range(SIGNALS)), "signals with no outcome line: " + str(
        sorted(set(range(SIGNALS)) - set(counts))[:10])
    assert {n for n in counts.values()} == {1}, [o for o, n in counts.items() if n != 1][:10]
    assert "TOPSECRET" not in proc.log()
    bombs = [i for i, (key, value) in enumerate(records) if key == db.encode() and value
             and any(json.dumps(b)[1:-1].encode() in value for b in COMPILE_BOMBS)]
    assert len(bombs) > 50
    refused = [line for line in proc.log().splitlines() if "before compiling" in line]
    assert sorted(int(re.search(r"offset (\d+)", line).group(1))  # type: ignore[union-attr]
                  for line in refused) == bombs
    assert peak_rss_kib(proc) < 1024 * 1024, "the connector grew past 1 GiB"
    writes_seen = not_read_only(cdc_statements(path))
    assert writes_seen == [], writes_seen[:5]
    sizes = [len(m.value() or b"") for m in consume_all(broker.bootstrap, f"{db}-offsets")]
    assert max(sizes) < 256 * 1024 + 4096
