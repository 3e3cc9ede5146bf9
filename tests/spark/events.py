"""Hand-made Debezium change events (JSON converter, with and without schemas) for the tests."""

from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Decimal
from typing import Any

from spark_consumer.dbztypes import encode_decimal

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def fld(name: str, ftype: str, logical: str | None = None, optional: bool = True,
        params: dict[str, str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"field": name, "type": ftype, "optional": optional}
    if logical:
        out["name"] = logical
    if params:
        out["parameters"] = params
    return out


ORDER_FIELDS = [
    fld("id", "int32", optional=False),
    fld("name", "string"),
    fld("amount", "bytes", "org.apache.kafka.connect.data.Decimal",
        params={"scale": "2", "connect.decimal.precision": "10"}),
    fld("day", "int32", "io.debezium.time.Date"),
    fld("at", "int64", "io.debezium.time.MicroTimestamp"),
    fld("flag", "boolean"),
    fld("blob", "bytes"),
]
KEY_FIELDS = [fld("id", "int32", optional=False)]


def order_json(id_: int, name: str, amount: Decimal, day: dt.date, at: dt.datetime,
               flag: bool, blob: bytes) -> dict[str, Any]:
    """The `after` image of an order as Debezium's JSON converter writes it."""
    return {"id": id_, "name": name, "amount": encode_decimal(amount, 2),
            "day": (day - dt.date(1970, 1, 1)).days,
            "at": (at - EPOCH) // dt.timedelta(microseconds=1), "flag": flag,
            "blob": base64.b64encode(blob).decode()}


def _struct(fields: list[dict[str, Any]], name: str, optional: bool) -> dict[str, Any]:
    return {"type": "struct", "fields": fields, "optional": optional, "name": name}


def value(op: str, before: dict[str, Any] | None, after: dict[str, Any] | None,
          fields: list[dict[str, Any]] | None, table: str = "app.orders") -> bytes:
    """A change envelope; with `fields` it carries the schema (JsonConverter schemas.enable)."""
    payload = {"before": before, "after": after, "op": op, "ts_ms": 0,
               "source": {"connector": "mariadb", "db": table.split(".")[0],
                          "table": table.split(".")[1], "snapshot": "false"}}
    if fields is None:
        return json.dumps(payload).encode()
    row = _struct(fields, f"x.{table}.Value", True)
    schema = _struct([dict(row, field="before"), dict(row, field="after"),
                      fld("source", "struct"), fld("op", "string", optional=False),
                      fld("ts_ms", "int64")], f"x.{table}.Envelope", False)
    return json.dumps({"schema": schema, "payload": payload}).encode()


def key(pk: dict[str, Any], fields: list[dict[str, Any]] | None) -> bytes:
    if fields is None:
        return json.dumps(pk).encode()
    return json.dumps({"schema": _struct(fields, "x.Key", False), "payload": pk}).encode()
