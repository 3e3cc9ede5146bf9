"""`--key DB.TABLE=col[,col]`: records keyed by named columns of their images instead.

The Kafka key of each record is replaced by those columns of its image (`before` for a
delete, `after` otherwise), in the key form the connector writes (with or without schema),
before anything decodes it: the rest of the job sees an ordinary keyed topic. An update
whose named columns change becomes a delete of the old key and an upsert of the new one, as
Debezium writes a primary key update.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from spark_consumer.decoding.columnar import RawRecord


def key_option(topics: Iterable[str], keys: dict[str, tuple[str, ...]]) -> list[str] | None:
    """The --key columns of the table of `topics` (`<prefix>.DB.TABLE`), None if not named."""
    for topic in topics:
        columns = keys.get(".".join(topic.split(".")[-2:]))
        if columns:
            return list(columns)
    return None


def _key(image: Any, schema: dict[str, Any] | None, image_name: str,
         columns: list[str]) -> bytes | None:
    """The key of `image` on `columns`; None (the decoder dead-letters it) when it lacks one."""
    if not isinstance(image, dict) or any(c not in image for c in columns):
        return None
    payload = {c: image[c] for c in columns}
    if schema is None:
        return orjson.dumps(payload)
    fields = {f.get("field"): f for f in _image_fields(schema, image_name)}
    if any(c not in fields for c in columns):
        return None
    key_schema = {"type": "struct", "optional": False, "name": "gtidmark.Key",
                  "fields": [fields[c] for c in columns]}
    return orjson.dumps({"schema": key_schema, "payload": payload})


def _image_fields(schema: dict[str, Any], name: str) -> list[dict[str, Any]]:
    for field in schema.get("fields") or []:
        if isinstance(field, dict) and field.get("field") == name:
            return [f for f in field.get("fields") or [] if isinstance(f, dict)]
    return []


def rekeyed(records: Iterable[RawRecord], columns: list[str]) -> Iterator[RawRecord]:
    """`records` with keys made of `columns`; tombstones and non-JSON records pass as they are
    (the decoder ignores or dead-letters them)."""
    for topic, partition, offset, key, value in records:
        try:
            obj = orjson.loads(value) if value is not None else None
        except orjson.JSONDecodeError:
            obj = None
        schema = None
        if isinstance(obj, dict) and set(obj) == {"schema", "payload"}:
            schema = obj["schema"] if isinstance(obj["schema"], dict) else None
            obj = obj["payload"]
        if not isinstance(obj, dict) or obj.get("op") not in ("c", "r", "u", "d"):
            yield topic, partition, offset, key, value
            continue
        op = obj["op"]
        image_name = "before" if op == "d" else "after"
        new = _key(obj.get(image_name), schema, image_name, columns)
        if op == "u" and isinstance(obj.get("before"), dict):
            old = _key(obj["before"], schema, "before", columns)
            if old is not None and new is not None and old != new:
                payload = {**obj, "op": "d", "after": None}
                deleted = {"schema": schema, "payload": payload} if schema else payload
                yield topic, partition, offset, old, orjson.dumps(deleted)
        yield topic, partition, offset, new, value
