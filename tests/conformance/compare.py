"""Record-by-record comparison of gtidmark's output with Debezium's, with the allow-list.

Both sides are lists of `{"topic", "key", "value", "headers"}` (JSON with schemas). The
allow-list below names every field that may differ and why (README, "Events").
"""

from __future__ import annotations

import datetime
import json
import re
from collections import defaultdict
from typing import Any

Record = dict[str, Any]
MASK = "<allowed to differ>"

# Paths inside a value payload that may differ, with the reason (see README "Events").
ALLOWED_PAYLOAD = {
    "source.version": "each product writes its own version",
    "ts_ms": "time the connector processed the event",
    "ts_us": "as ts_ms",
    "ts_ns": "as ts_ms",
    "source.gtid": "MariaDB GTID (domain-server-seq) as the MariaDB connector writes it; "
                   "Debezium's MySQL connector sees no MySQL GTIDs on MariaDB and writes null",
    "transaction.id": "the MariaDB GTID (MariaDB connector); the MySQL connector without "
                      "MySQL GTIDs uses file:pos",
    "id": "transaction topic: as transaction.id",
}
# Debezium's MariaDB connector names its schemas io.debezium.connector.mariadb.* and writes
# source.connector "mariadb"; the MySQL connector run on the same server says "mysql".
FLAVOUR_NAMES = ("io.debezium.connector.mariadb.", "io.debezium.connector.mysql.")


def _mask(payload: Any, path: str) -> None:
    head, _, rest = path.partition(".")
    if not isinstance(payload, dict) or head not in payload:
        return
    if rest:
        _mask(payload[head], rest)
    else:
        payload[head] = MASK


def _unflavour(doc: Any) -> Any:
    text = json.dumps(doc, sort_keys=True).replace(*FLAVOUR_NAMES)
    return json.loads(text.replace('"connector": "mariadb"', '"connector": "mysql"'))


def _named_fields(schema: Any) -> Any:
    """Struct members by field name (diff paths then name the column), order kept apart."""
    if isinstance(schema, list):
        return [_named_fields(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _named_fields(v) for k, v in schema.items()}
    fields = schema.get("fields")
    if isinstance(fields, list) and all(isinstance(f, dict) and "field" in f for f in fields):
        out["fields"] = {f["field"]: _named_fields(f) for f in fields}
        out["field_order"] = [f["field"] for f in fields]
    return out


def normalize(record: Record, extra_masks: tuple[str, ...] = ()) -> Record:
    """The record with allowed differences masked and MariaDB names read as MySQL's."""
    value = _unflavour(record.get("value"))
    key = _unflavour(record.get("key"))
    for doc in (key, value):
        if isinstance(doc, dict) and "schema" in doc:
            doc["schema"] = _named_fields(doc["schema"])
    if isinstance(value, dict) and isinstance(value.get("payload"), dict):
        payload = value["payload"]
        for path in (*ALLOWED_PAYLOAD, *extra_masks):
            _mask(payload, path)
        if isinstance(payload.get("data_collections"), list):  # a map in Debezium: no order
            payload["data_collections"].sort(key=lambda c: str(c.get("data_collection")))
    if record["topic"].endswith(".transaction") and isinstance(key, dict):
        _mask(key.get("payload"), "id")
    return {"topic": record["topic"], "key": key, "value": value}


_ZONED = re.compile(r'^r\[\d+\] value\.payload\.(?:after|before)\.\w+: Debezium "([^"]+Z)" '
                    r'!= gtidmark "([^"]+Z)"$')


def _same_instant_in_snapshot(problem: str) -> bool:
    """A ZonedTimestamp of a snapshot read: Debezium's snapshot trims zero fraction digits
    (Java's ISO instant format), its streaming pads them to the column's precision, as
    gtidmark does in both. The same instant either way."""
    match = _ZONED.match(problem)
    if match is None:
        return False
    theirs, ours = (datetime.datetime.fromisoformat(t) for t in match.groups())
    return theirs == ours


def allowed(problem: str) -> bool:
    return _same_instant_in_snapshot(problem) or any(
        re.search(pattern, problem) for pattern in ALLOWED_PATTERNS)


# Differences allowed by the value they show, with the reason (README "Events").
ALLOWED_PATTERNS = {
    r"source\.thread: Debezium 0 != gtidmark null": "MariaDB's GTID event has no thread id: "
    "the MariaDB connector begins the transaction with none (null); the MySQL connector, "
    "served a BEGIN query event instead, writes its 0",
}


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Paths where `a` (Debezium) and `b` (gtidmark) differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{k}" if path else str(k)
            if k not in a:
                out.append(f"{sub}: only gtidmark has it ({_short(b[k])})")
            elif k not in b:
                out.append(f"{sub}: only Debezium has it ({_short(a[k])})")
            else:
                out += differences(a[k], b[k], sub)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, f"{path}[{i}]")]
    if a != b or type(a) is not type(b):
        return [f"{path}: Debezium {_short(a)} != gtidmark {_short(b)}"]
    return []


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 300 else text[:300] + "..."


def by_topic(records: list[Record]) -> dict[str, list[Record]]:
    out: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        out[r["topic"]].append(r)
    return out


def compare_sequences(debezium: list[Record], ours: list[Record], what: str,
                      extra_masks: tuple[str, ...] = ()) -> list[str]:
    """Record i against record i; the count too."""
    problems = []
    if len(debezium) != len(ours):
        problems.append(f"{what}: Debezium sent {len(debezium)} records, gtidmark "
                        f"{len(ours)}")
        problems = [p for p in problems if not allowed(p)]
    for i, (a, b) in enumerate(zip(debezium, ours, strict=False)):
        diff = differences(normalize(a, extra_masks), normalize(b, extra_masks))
        problems += [p for p in (f"{what}[{i}] {d}" for d in diff) if not allowed(p)]
    return problems
