"""JSON-with-schemas envelopes parsed once per schema text, then only their payloads.

A topic's records repeat the same schema text, most of each record's bytes: a range parses it
once and, for the records that start with exactly that text, parses the payload alone.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

# The envelope's two keys as JsonConverter/Jackson (compact) and Python's json.dumps write them.
_LAYOUTS = ((b'{"schema":', b',"payload":'), (b'{"schema": ', b', "payload": '))
_JSON_SPACE = b" \t\n\r"


class NotEnvelope(ValueError):
    """Not a JSON object of exactly `schema` (an object) and `payload` (says why)."""


def parse_envelope(raw: bytes) -> tuple[Any, dict[str, Any]]:
    """(payload, schema) of a whole record, parsed in full."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise NotEnvelope(f"not JSON for orjson: {exc}") from None
    if type(obj) is not dict or len(obj) != 2 or type(obj.get("schema")) is not dict \
            or "payload" not in obj:
        raise NotEnvelope("not JSON with schemas")
    return obj["payload"], obj["schema"]


class Envelopes:
    """The schema texts seen so far in one range; `split` parses only what it has to.

    A prefix is learnt only as `{"schema":` + the schema's complete JSON text + `,"payload":`,
    so a record starting with it and ending in `}` is that schema plus whatever the rest parses
    to: the same (payload, schema) a full parse gives, or a full parse decides.
    """

    def __init__(self, limit: int = 8) -> None:
        self.limit = limit
        self.prefixes: list[tuple[bytes, dict[str, Any]]] = []

    def split(self, raw: bytes) -> tuple[Any, dict[str, Any], int]:
        """(payload, schema, index of the schema text learnt, -1 if none) of one record."""
        for index, (prefix, schema) in enumerate(self.prefixes):
            if raw.startswith(prefix):
                body = raw.rstrip(_JSON_SPACE)
                if body.endswith(b"}"):
                    try:
                        return orjson.loads(body[len(prefix):-1]), schema, index
                    except orjson.JSONDecodeError:
                        pass
                break
        payload, schema = parse_envelope(raw)
        return payload, schema, self._learn(raw, schema)

    def payload_text(self, raw: bytes) -> tuple[bytes, dict[str, Any], int]:
        """(the payload's JSON text, unparsed, schema, index) of a record whose schema text is
        or becomes learnt; NotEnvelope for any other record."""
        for index, (prefix, schema) in enumerate(self.prefixes):
            if raw.startswith(prefix):
                body = raw.rstrip(_JSON_SPACE)
                if not body.endswith(b"}"):
                    raise NotEnvelope("a record of a known schema text that does not end in }")
                return body[len(prefix):-1], schema, index
        _, schema = parse_envelope(raw)
        index = self._learn(raw, schema)
        if index < 0:
            raise NotEnvelope("a schema text this range does not keep")
        return raw.rstrip(_JSON_SPACE)[len(self.prefixes[index][0]):-1], schema, index

    def _learn(self, raw: bytes, schema: dict[str, Any]) -> int:
        if len(self.prefixes) >= self.limit:
            return -1
        texts = {orjson.dumps(schema), json.dumps(schema).encode(),
                 json.dumps(schema, ensure_ascii=False).encode()}
        for head, tail in _LAYOUTS:
            for text in texts:
                prefix = head + text + tail
                if raw.startswith(prefix):
                    self.prefixes.append((prefix, schema))
                    return len(self.prefixes) - 1
        return -1
