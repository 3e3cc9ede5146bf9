"""Record-by-record comparison of gtidmark's output with Debezium's, with the allow-list.

Both sides are lists of `{"topic", "key", "value", "headers"}` (JSON with schemas; a
schemaless run's keys and values put in `{"payload": ...}` first, runs.enveloped). The
allow-list below names every field that may differ and why (README, "Events").
"""

from __future__ import annotations

import base64
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
}
# On MariaDB only (on MySQL both write the MySQL GTID, compared).
ALLOWED_MARIADB_PAYLOAD = {
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


def normalize(record: Record, extra_masks: tuple[str, ...] = (),
              flavour: str = "mariadb") -> Record:
    """The record with allowed differences masked and MariaDB names read as MySQL's."""
    if flavour == "mariadb":
        extra_masks = (*ALLOWED_MARIADB_PAYLOAD, *extra_masks)
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
    if flavour == "mariadb" and record["topic"].endswith(".transaction") \
            and isinstance(key, dict):
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


_TEXT_BYTES = re.compile(r"value\.payload\.(?:after|before)\.bin_\w+: Debezium (\".*\") "
                         r"!= gtidmark (\"[A-Za-z0-9+/=]*\")$")


def _binary_declared_as_text(problem: str) -> bool:
    """A CHAR/VARCHAR/TEXT declared CHARACTER SET binary in a streamed DDL (the scenarios
    name such columns bin_*): MySQL makes it BINARY/VARBINARY/BLOB, and so do we, with
    bytes; Debezium's DDL parser keeps the declared string type and writes the bytes as
    ISO-8859-1 text, BINARY(n)'s zero padding stripped (its snapshot, which reads the type
    from SHOW CREATE TABLE, has bytes as we do). The same bytes either way."""
    match = _TEXT_BYTES.search(problem)
    if match is None:
        return False
    theirs, ours = (json.loads(g) for g in match.groups())
    try:
        return bool(theirs.encode("latin-1") == base64.b64decode(ours).rstrip(b"\0"))
    except (UnicodeEncodeError, ValueError):
        return False


_JSON_QUIRK = re.compile(r"\.json_quirks\[\d+\] value\.payload\.(?:after|before)\.jq: "
                         r"Debezium \"")


def _json_debezium_misprints(problem: str) -> bool:
    """A streamed JSON value Debezium's JsonBinary (0.41.2) gets wrong: a negative TIME
    garbled ("01:0-1:0-1" for -00:00:01), an unsigned number from 2^31 to 2^32 negative,
    and an unsigned 32-bit number inline in a large document left out (`"u32":`, no JSON
    at all). We write the stored value, in Debezium's form, as its own snapshot (MySQL's
    text) has it. The scenarios hold such values in json_quirks.jq only (what we write for
    them: tests/unit/test_mysql_json.py)."""
    return _JSON_QUIRK.search(problem) is not None


_YEAR_ZERO = re.compile(r"value\.payload\.(?:after|before)\.y\w*: Debezium (?:1900|2000) "
                        r"!= gtidmark 0$")


def _year_zero(problem: str) -> bool:
    """YEAR 0000 (the scenarios name YEAR columns y*): Debezium writes 1900 streamed (its
    binlog client adds 1900 to the stored 0) and 2000 snapshotted (its two-digit-year rule
    on a SELECT's 0); we write the stored 0 in both."""
    return _YEAR_ZERO.search(problem) is not None


def allowed(problem: str) -> bool:
    return any(check(problem) for check in (
        _same_instant_in_snapshot, _binary_declared_as_text, _json_debezium_misprints,
        _year_zero)) or any(re.search(pattern, problem) for pattern in ALLOWED_PATTERNS)


# Differences allowed by the value they show, with the reason (README "Events").
ALLOWED_PATTERNS = {
    r"source\.thread: Debezium 0 != gtidmark null": "MariaDB's GTID event has no thread id: "
    "the MariaDB connector begins the transaction with none (null); the MySQL connector, "
    "served a BEGIN query event instead, writes its 0",
    r'position\.transaction_id: Debezium "file=[^"]+,pos=\d+" != gtidmark "\d+-\d+-\d+"$':
    "history of a DDL inside a transaction (CREATE TABLE ... SELECT) on MariaDB: the MariaDB "
    "GTID, as transaction.id (the MariaDB connector); the MySQL connector without MySQL "
    "GTIDs writes file=...,pos=...",
    r"value\.schema\.fields\.(?:after|before)\.fields\.bin_\w+\.type: "
    r"Debezium \"string\" != gtidmark \"bytes\"$": "a column declared CHAR/VARCHAR/TEXT "
    "CHARACTER SET binary: bytes, as MySQL types it (see _binary_declared_as_text)",
    r"(?:\.default|defaultValueExpression): Debezium \"it''s\" != gtidmark \"it's\"$": "a "
    "string DEFAULT with a quote ('it''s'): Debezium's parser keeps the SQL escape in the "
    "value (it''s, from the streamed DDL and from SHOW CREATE TABLE alike); we write it's",
    r"\.fields\.\w+\.default: Debezium 9223372036854775807 != gtidmark -1$": "a BIGINT "
    "UNSIGNED DEFAULT above 2^63-1 (18446744073709551615): Debezium's default converter "
    "clamps it to 2^63-1, while its values of the same number are two's complement (-1); "
    "we write the default as the value",
    r"mdefaults\[\d+\] value\.schema\.fields\.(?:after|before)\.fields\.vb\.default: "
    r"Debezium \"MDEw\" != gtidmark \"AQI=\"$|defaultValueExpression: Debezium \"010\" != "
    r"gtidmark \"0102\"$": "a hex DEFAULT (VARBINARY DEFAULT 0x0102) in a streamed DDL: "
    "Debezium's parser cuts 0x0102 as if it were x'0102' and reads the text '010', so its "
    "default is those three characters (MDEw) and its defaultValueExpression 010; we write "
    "the bytes the column holds, 01 02 (AQI=, as Debezium's own snapshot of the same table "
    "does), and the literal's digits",
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
                      extra_masks: tuple[str, ...] = (), flavour: str = "mariadb") -> list[str]:
    """Record i against record i; the count too."""
    problems = []
    if len(debezium) != len(ours):
        problems.append(f"{what}: Debezium sent {len(debezium)} records, gtidmark "
                        f"{len(ours)}")
        problems = [p for p in problems if not allowed(p)]
    for i, (a, b) in enumerate(zip(debezium, ours, strict=False)):
        diff = differences(normalize(a, extra_masks, flavour),
                           normalize(b, extra_masks, flavour))
        problems += [p for p in (f"{what}[{i}] {d}" for d in diff) if not allowed(p)]
    return problems
