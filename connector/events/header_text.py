"""A Connect struct as Kafka Connect's SimpleHeaderConverter writes it (Values.convertToString).

Debezium's `__debezium.newkey`/`oldkey` headers hold the key struct; a Connect worker's
default header.converter writes it as `{"id":101,"k2":"a"}`: field names and strings quoted
with only `\\` and `"` escaped, numbers as Java prints them, bytes as quoted base64, Connect's
Decimal as BigDecimal.toString, Connect's Date/Time/Timestamp unquoted in ISO 8601 (UTC).
"""

from __future__ import annotations

import binascii
import datetime
import math
from decimal import Decimal
from typing import Any

from connector.events.java_float import float_to_string

_DAY_MS = 86_400_000
_CONNECT = "org.apache.kafka.connect.data."
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def struct_text(schema: dict[str, Any], payload: dict[str, Any]) -> bytes:
    """The header bytes of a struct payload (as a JsonConverter payload holds it)."""
    return _struct(schema, payload).encode("utf-8")


def _struct(schema: dict[str, Any], payload: dict[str, Any]) -> str:
    return "{" + ",".join(f'"{_escape(f["field"])}":{_value(f, payload.get(f["field"]))}'
                          for f in schema["fields"]) + "}"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _value(schema: dict[str, Any], value: Any) -> str:
    """Values.append(sb, value, embedded=true) for the Java object Connect holds."""
    if value is None:
        return "null"
    kind, name = schema["type"], schema.get("name")
    if name == _CONNECT + "Decimal":
        scale = int(schema["parameters"]["scale"])
        unscaled = int.from_bytes(value, "big", signed=True)
        sign, digits = (1 if unscaled < 0 else 0), tuple(int(d) for d in str(abs(unscaled)))
        return str(Decimal((sign, digits, -scale)))  # the same notation as BigDecimal's
    if name in (_CONNECT + "Date", _CONNECT + "Time", _CONNECT + "Timestamp"):
        return _java_date(value * _DAY_MS if name == _CONNECT + "Date" else value)
    if kind == "boolean":
        return "true" if value else "false"
    if kind == "string":
        return f'"{_escape(value)}"'
    if kind == "bytes":
        return '"' + binascii.b2a_base64(value, newline=False).decode("ascii") + '"'
    if kind == "float":
        return float_to_string(value)
    if kind == "double":
        return double_to_string(value)
    if kind == "array":
        return "[" + ",".join(_value(schema["items"], v) for v in value) + "]"
    if kind == "struct":
        return _struct(schema, value)
    return str(int(value))


def _java_date(ms: int) -> str:
    """Values.dateFormatFor: a time of day below one day (negatives too), a date at
    midnight, else a timestamp."""
    moment = _EPOCH + datetime.timedelta(milliseconds=ms)
    millis = f"{moment.microsecond // 1000:03d}Z"
    if ms < _DAY_MS:
        return moment.strftime("%H:%M:%S.") + millis
    if ms % _DAY_MS == 0:
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + millis


def double_to_string(value: float) -> str:
    """Java's Double.toString from the shortest digits (Java 17 writes a digit more for some
    values in E-notation, see java_float.py; doubles in keys are rare)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + exponent  # the decimal point's place after the first digit
    head = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{head}0.{'0' * -point}{text}"
        whole, frac = text[:point].ljust(point, "0"), text[point:]
        return f"{head}{whole}.{frac or '0'}"
    return f"{head}{text[0]}.{text[1:] or '0'}E{point - 1}"
