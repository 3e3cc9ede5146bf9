"""The body of PATCH /connectors/{name}/offsets (KIP-875), checked as Kafka Connect does.

Connect binds the body with Jackson before anything else: a body that is not JSON or does
not have the `ConnectorOffsets` shape is a 500 with Jackson's message; an empty list is a
400. The offset itself is this connector's business: one source partition
`{"server": <topic.prefix>}`, and a value with a `gtids` position (or null, forgetting it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from connector.config import ConnectorConfig
from connector.flavours import position_of_either
from connector.offsets_value import ConnectorOffsets

EMPTY = "Partitions / offsets need to be provided for an alter offsets request"


class BadBody(Exception):
    """The body could not be bound (Kafka Connect: 500); the message says where."""


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
            ConnectorOffsets.from_json(self.value)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise BadOffsets(f"offset: not an offsets value of this connector ({exc})") from None


# The offsets value's integers (connector/offsets_value.py).
_NUMBERS = ("pos", "event", "row", "server_id", "ts_sec", "signal_offset", "epoch",
            "writer_pid")


def parse_alter_offsets(body: bytes) -> AlterOffsets:
    """Bind the body or raise BadBody (500) / BadOffsets (400, empty list)."""
    if not body.strip():
        raise BadBody("No content to map due to end-of-input")
    try:
        document = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadBody(f"request body is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise BadBody(f"Cannot deserialize value of type ConnectorOffsets from "
                      f"{type(document).__name__}")
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
