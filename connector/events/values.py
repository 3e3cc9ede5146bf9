"""Value converters: a column value to the value Debezium writes in events.

They accept a value as decoded by mysql-replication 1.0.17 (streaming) *and* by a SELECT
(the snapshot's session, time_zone '+00:00', whose values are pymysql's) and give the same output for the same
stored value. `types.field_mapping` picks one per column.
"""

from __future__ import annotations

import datetime as dt
import json
import struct
from collections.abc import Callable
from decimal import Context, Decimal
from typing import Any

from connector.events.java_float import float_to_string

Converter = Callable[[Any], Any]

_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_EPOCH = dt.datetime(1970, 1, 1)
_DEC = Context(prec=200)
_F32 = struct.Struct("<f")


def unscaled_bytes(value: Decimal, scale: int) -> bytes:
    """Kafka Connect Decimal: the unscaled value, big-endian two's complement, minimal length."""
    return _twos_complement(int(value.scaleb(scale, context=_DEC).to_integral_value(context=_DEC)))


def _twos_complement(n: int) -> bytes:
    """Java's BigInteger.toByteArray(): minimal big-endian two's complement."""
    return n.to_bytes((n if n >= 0 else ~n).bit_length() // 8 + 1, "big", signed=True)


def _as_decimal(value: Any) -> Decimal:
    return value if isinstance(value, Decimal) else Decimal(str(value))


def decimal_precise(scale: int) -> Converter:
    shift = Decimal(10) ** scale
    factor: int = 10**scale
    multiply = _DEC.multiply

    def convert(value: Any) -> bytes:
        if type(value) is Decimal:  # the exact ratio: half the time of Decimal arithmetic
            numerator, denominator = Decimal.as_integer_ratio(value)
            n, rest = divmod(numerator * factor, denominator)
            if not rest:
                return _twos_complement(n)
        # value * 10^scale is exact at this precision; it is integral unless the value has
        # more fraction digits than the column (then round as unscaled_bytes does).
        scaled = multiply(value if type(value) is Decimal else _as_decimal(value), shift)
        n = int(scaled)
        if scaled != n:
            n = int(scaled.to_integral_value(context=_DEC))
        return _twos_complement(n)
    return convert


def decimal_string(scale: int) -> Converter:
    quantum = Decimal(1).scaleb(-scale)

    def convert(value: Any) -> str:
        return format(_as_decimal(value).quantize(quantum, context=_DEC), "f")
    return convert


def decimal_double(value: Any) -> float:
    return float(value)


def bigint_unsigned(value: int) -> int:
    """bigint.unsigned.handling.mode=long: Java's long cast wraps values above 2^63-1."""
    return value - (1 << 64) if value >= 1 << 63 else value


def float32(value: Any) -> float:
    """FLOAT as Kafka's JsonConverter writes a Java float: Java 17's `Float.toString` of the
    32-bit value (123456.7 from the binlog; a SELECT's text gives the same float), which is
    the shortest decimal that reads back as that float except where Java writes a digit
    more (java_float.py)."""
    return float(float_to_string(float(value)))


def float_vector(value: Any) -> list[float]:
    """MySQL's VECTOR (little-endian float32s) as Debezium's FloatVector: a list of Java
    floats; a length that is no multiple of 4 gives an empty list, as there."""
    raw = bytes(value.encode("latin-1") if isinstance(value, str) else value)
    if len(raw) % 4:
        return []
    return [float32(x) for (x,) in _F32.iter_unpack(raw)]


def float32_widened(value: Any) -> float:
    """FLOAT(M,D) as Debezium sends it: the exact 32-bit value as a double."""
    widened: float = _F32.unpack(_F32.pack(float(value)))[0]
    return widened


def _bit_int(value: Any) -> int:
    if isinstance(value, str):  # mysql-replication: "0101..."
        return int(value, 2) if value else 0
    if isinstance(value, bytes | bytearray):  # a SELECT: big-endian bytes
        return int.from_bytes(value, "big")
    return int(value)


def bit_bool(value: Any) -> bool:
    return _bit_int(value) != 0


def bits(length: int) -> Converter:
    size = length // 8 + (1 if length % 8 else 0)

    def convert(value: Any) -> bytes:
        return _bit_int(value).to_bytes(size, "little")
    return convert


def binary(length: int | None) -> Converter:
    def convert(value: Any) -> bytes:
        if isinstance(value, str):  # mysql-replication yields '' for an empty binary value
            value = value.encode("latin-1")
        if length is not None and len(value) < length:  # binlog strips BINARY(n) zero padding
            return bytes(value).ljust(length, b"\x00")
        return bytes(value)
    return convert


def date_days(value: Any) -> int | None:
    if isinstance(value, dt.date):
        return value.toordinal() - _EPOCH_ORDINAL
    return None  # zero or invalid date ('0000-00-00' comes back from a SELECT as a string)


def time_micros(value: Any) -> int | None:
    if isinstance(value, dt.timedelta):
        return (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    return None


def time_millis(value: Any) -> int | None:
    micros = time_micros(value)
    return None if micros is None else micros // 1000


def epoch_micros(value: Any) -> int | None:
    if isinstance(value, dt.datetime):
        days = value.toordinal() - _EPOCH_ORDINAL
        secs = days * 86_400 + value.hour * 3600 + value.minute * 60 + value.second
        return secs * 1_000_000 + value.microsecond
    return None


def epoch_millis(value: Any) -> int | None:
    micros = epoch_micros(value)
    return None if micros is None else micros // 1000


def zoned(fsp: int) -> Converter:
    """io.debezium.time.ZonedTimestamp: ISO-8601 in UTC, exactly `fsp` fraction digits."""
    def convert(value: Any) -> str | None:
        if not isinstance(value, dt.datetime) or value == _EPOCH:
            return None  # zero TIMESTAMP (binlog: epoch 0, a SELECT: a string)
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        text: str = value.isoformat(timespec=spec)
        return text[:cut] + "Z"
    spec = "seconds" if fsp <= 0 else "microseconds"
    cut = 19 if fsp <= 0 else 20 + min(fsp, 6)  # isoformat pads years to 4 digits
    return convert


def year(value: Any) -> int:
    number = int(value)
    return 0 if number == 1900 else number  # mysql-replication adds 1900 to YEAR 0000


def enum_set(members: tuple[str, ...]) -> Converter:
    def convert(value: Any) -> str:
        if isinstance(value, str):
            return value
        return ",".join(m for m in members if m in value)  # definition order, as MySQL prints
    return convert


def json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return json.dumps(_plain_json(value), separators=(",", ":"), ensure_ascii=False)


def _plain_json(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, dict):
        return {_plain_json(k): _plain_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_json(v) for v in value]
    return value


def string(value: Any) -> str:
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def geometry(value: Any) -> dict[str, Any]:
    """MySQL's internal geometry is a 4-byte SRID + WKB; Debezium writes SRID 0 as null."""
    raw = bytes(value.encode("latin-1") if isinstance(value, str) else value)
    return {"wkb": raw[4:], "srid": int.from_bytes(raw[:4], "little") or None}


def point(value: Any) -> dict[str, Any]:
    """io.debezium.data.geometry.Point: x and y read from the WKB, plus wkb and srid."""
    shape = geometry(value)
    wkb = shape["wkb"]
    x, y = struct.unpack_from("<dd" if wkb[:1] == b"\x01" else ">dd", wkb, 5)
    return {"x": x, "y": y, **shape}
