"""The body of PATCH /connectors/{name}/offsets (KIP-875), checked as Kafka Connect does.

Connect binds the body with Jackson before anything else: a body that is not JSON or does
not have the `ConnectorOffsets` shape is a 500 with Jackson's message; an empty list is a
400. The offset itself is this connector's business: one source partition
`{"server": <topic.prefix>}`, and a value with a `gtids` position (or null, forgetting it).
Its `snapshot_state` may hold no more than signals could have put there: captured tables,
execute-snapshot's filters and keys, set-throttle's bounds, the same size.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from connector.flavours import position_of_either
from connector.offsets.value import SNAPSHOT_KEY, ConnectorOffsets, snapshot_raw
from connector.settings.filters import TableFilter
from connector.settings.model import ConnectorConfig
from connector.snapshot.requests import MAX_STATE_BYTES
from connector.snapshot.state import SnapshotState
from signals.models import SetThrottle, SignalRejected, signal_from_value

EMPTY = "Partitions / offsets need to be provided for an alter offsets request"
_WHERE = f"offset.{SNAPSHOT_KEY}"  # what refusals of the snapshot state name
# The snapshot state's throttle fields and set-throttle's names for them.
_THROTTLE = {"chunk_size": "chunk-size", "chunk_delay_ms": "chunk-delay-ms"}


class BadBody(Exception):
    """The body could not be bound (Kafka Connect: 500); the message says where."""


def json_object(body: bytes, type_name: str) -> dict[str, Any]:
    """A request body Jackson would start binding to `type_name`: a JSON object, else
    BadBody (500, as Connect), with Jackson's words where they matter."""
    if not body.strip():
        raise BadBody("No content to map due to end-of-input")
    try:
        document = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadBody(f"request body is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise BadBody(f"Cannot deserialize value of type {type_name} from "
                      f"{type(document).__name__}")
    return document


class BadOffsets(Exception):
    """Bound, but not offsets this connector can take (400)."""


@dataclass(frozen=True)
class AlterOffsets:
    partition: dict[str, Any]
    value: dict[str, Any] | None  # None: forget the position

    def check(self, config: ConnectorConfig) -> None:
        expected = {"server": config.topic_prefix}
        if self.partition != expected:
            raise BadOffsets(f"unknown source partition {json.dumps(self.partition)}: this "
                             f"connector has one, {json.dumps(expected)}")
        if self.value is None:
            return
        gtids = self.value.get("gtids")
        if not isinstance(gtids, str):
            raise BadOffsets("offset.gtids: required, a GTID position such as \"0-1-42\" "
                            "(MariaDB) or a GTID set such as \"<uuid>:1-42\" (MySQL)")
        try:
            position_of_either(gtids)
        except ValueError as exc:
            raise BadOffsets(f"offset.gtids: {exc}") from None
        for name in _NUMBERS:
            number = self.value.get(name)
            if number is not None and (type(number) is not int or number < 0):
                raise BadOffsets(f"offset.{name}: a whole number >= 0, not "
                                 f"{json.dumps(number)[:40]}")
        try:
            offsets = ConnectorOffsets.from_json(self.value)
        except (ValueError, TypeError, KeyError, AttributeError, ArithmeticError,
                RecursionError) as exc:  # int(Infinity), a nesting too deep for json
            raise BadOffsets(f"offset: not an offsets value of this connector ({exc})") from None
        if offsets.snapshot is not None:
            _check_snapshot(snapshot_raw(self.value), offsets.snapshot, config)


def _check_snapshot(raw: Any, state: SnapshotState, config: ConnectorConfig) -> None:
    """What signals would refuse is refused here: a REST user gets no more than a signal."""
    data = json.loads(raw) if isinstance(raw, str) else raw
    throttle = {alias: data[key] for key, alias in _THROTTLE.items() if data.get(key) is not None}
    if throttle:
        try:
            SetThrottle.model_validate(throttle)
        except ValidationError as exc:
            error = exc.errors()[0]
            alias = str(error["loc"][0]) if error["loc"] else "chunk-size"
            key = next(k for k, a in _THROTTLE.items() if a == alias)
            raise BadOffsets(f"{_WHERE}: {key} {json.dumps(throttle.get(alias))[:40]}: "
                             f"{error['msg']} (as set-throttle's {alias})") from None
    captured = TableFilter(config)
    seen: set[str] = set()
    for table in state.tables:
        name = table.table
        db, dot, rest = name.partition(".") if isinstance(name, str) else ("", "", "")
        if not dot or not captured.captured(db, rest):
            raise BadOffsets(f"{_WHERE}: table {json.dumps(name)[:200]} is not captured "
                             "by this connector (its include/exclude lists)")
        if name in seen:
            raise BadOffsets(f"{_WHERE}: table {name} is listed twice")
        seen.add(name)
        request: dict[str, Any] = {"data-collections": [name]}
        if table.condition is not None:
            request["additional-conditions"] = [{"data-collection": name,
                                                 "filter": table.condition}]
        if table.surrogate_key is not None:
            request["surrogate-key"] = table.surrogate_key
        try:
            signal_from_value({"type": "execute-snapshot", "data": request})
        except SignalRejected as exc:
            raise BadOffsets(f"{_WHERE}: table {name}: refused as a signal would be: "
                             f"{exc.reason}") from None
    if state.json_size() > MAX_STATE_BYTES:
        raise BadOffsets(f"{_WHERE}: more than {MAX_STATE_BYTES} bytes, as a signal's "
                         "snapshot queue may not be")


# The offsets value's integers (connector/offsets/value.py).
_NUMBERS = ("pos", "event", "row", "server_id", "ts_sec", "signal_offset", "signal_in_progress",
            "signal_attempt", "signal_source_row", "signal_source_attempt", "epoch",
            "writer_pid")


def parse_alter_offsets(body: bytes) -> AlterOffsets:
    """Bind the body or raise BadBody (500) / BadOffsets (400, empty list)."""
    document = json_object(body, "ConnectorOffsets")
    _only(document, {"offsets"})
    offsets = document.get("offsets")
    if offsets is None or offsets == []:
        raise BadOffsets(EMPTY)
    if not isinstance(offsets, list):
        raise BadBody("Cannot deserialize value: \"offsets\" must be an array")
    items: list[AlterOffsets] = []
    for item in offsets:
        if not isinstance(item, dict):
            raise BadBody(f"Cannot construct instance of ConnectorOffset from {item!r}")
        _only(item, {"partition", "offset"})
        partition, value = item.get("partition"), item.get("offset")
        if not isinstance(partition, dict):
            raise BadBody("Cannot deserialize value: \"partition\" must be an object")
        if value is not None and not isinstance(value, dict):
            raise BadBody("Cannot deserialize value: \"offset\" must be an object or null")
        items.append(AlterOffsets(partition, value))
    if len(items) > 1:
        raise BadOffsets("this connector has one source partition: give one offset")
    return items[0]


def _only(document: dict[str, Any], known: set[str]) -> None:
    extra = sorted(set(document) - known)
    if extra:
        raise BadBody(f"Unrecognized field \"{extra[0]}\" (known: {', '.join(sorted(known))})")
