"""MySQL's binary JSON (a streamed JSON column) as the text Debezium's MySQL connector writes.

mysql-replication 1.0.17 decodes the binary form to Python objects and loses what the text
needs: a DATE, TIME or DATETIME inside a document becomes a Python object without its kind
(and a negative TIME its sign), other opaque values (BINARY, BLOB) are decoded as text with
errors ignored. Debezium writes the text mysql-binlog-connector-java's `JsonBinary`
(0.41.2, in Debezium 3.6.3) formats, which is not MySQL's own: no blanks, a double as
Java's `Double.toString` unless that has an exponent (then the exact decimal of the
double), a DECIMAL or UINT64 in plain digits, DATE/DATETIME/TIME as quoted text with the
fraction's trailing zeros cut, any other opaque value as quoted base64, control characters
as upper-case `\\u00XX`. The same JSON values as MySQL's text, in Debezium's form.

Where JsonBinary gets the value itself wrong, we write the stored value in that form (and
Debezium's own snapshot, which reads MySQL's text, has it too): a negative TIME (it
writes -00:00:01 as "01:0-1:0-1"), an unsigned number from 2^31 to 2^32 (3000000000 as
-1294967296), and such a number held inline in a large (over 64 KiB) object or array,
which it leaves out, writing `"k":` and no value (tests/conformance/compare.py).

`install()` makes the library hand the row decoder this text instead of its objects
(`connector.events.values.json_text` passes a str on). A partial JSON update
(`binlog_row_value_options=PARTIAL_JSON`) still goes the library's way.
"""

from __future__ import annotations

import base64
import struct
from decimal import Decimal
from typing import Any

from pymysqlreplication.packet import BinLogPacketWrapper

from connector.binlog.decimals import decimal_reader

_SMALL_OBJECT, _LARGE_OBJECT, _SMALL_ARRAY, _LARGE_ARRAY = 0, 1, 2, 3
_LITERAL, _INT16, _UINT16, _INT32, _UINT32, _INT64, _UINT64, _DOUBLE, _STRING = range(4, 13)
_OPAQUE = 0x0F
_DECIMALS = (0, 246)  # MYSQL_TYPE_DECIMAL, NEWDECIMAL
_DATE = (10, 14)  # DATE, NEWDATE
_TIMES = (11, 19)  # TIME, TIME2
_DATETIMES = (7, 12, 17, 18)  # TIMESTAMP, DATETIME, TIMESTAMP2, DATETIME2
_I16, _U16, _I32, _U32 = (struct.Struct(f) for f in ("<h", "<H", "<i", "<I"))
_I64, _U64, _F64 = (struct.Struct(f) for f in ("<q", "<Q", "<d"))
_ESCAPES = {c: f"\\u{c:04X}" for c in range(32)} | {
    ord('"'): '\\"', ord("\\"): "\\\\", 8: "\\b", 9: "\\t", 12: "\\f", 10: "\\n", 13: "\\r"}


def text(data: bytes) -> str:
    """The JSON text Debezium writes for a binary JSON value (`data` non-empty)."""
    if 0x0F < data[0] < 0x80:  # JsonBinary.isJSONString: a text value (MariaDB)
        return data.decode("utf-8", "replace")
    out: list[str] = []
    _value(data, data[0], 1, out)
    return "".join(out)


def _string(value: str) -> str:
    return '"' + value.translate(_ESCAPES) + '"'


def _value(data: bytes, kind: int, at: int, out: list[str]) -> None:
    if kind in (_SMALL_OBJECT, _LARGE_OBJECT, _SMALL_ARRAY, _LARGE_ARRAY):
        _container(data, at, kind in (_SMALL_OBJECT, _SMALL_ARRAY),
                   kind in (_SMALL_OBJECT, _LARGE_OBJECT), out)
    elif kind == _LITERAL:
        out.append(_literal(data[at]))
    elif kind == _INT16:
        out.append(str(_I16.unpack_from(data, at)[0]))
    elif kind == _UINT16:
        out.append(str(_U16.unpack_from(data, at)[0]))
    elif kind == _INT32:
        out.append(str(_I32.unpack_from(data, at)[0]))
    elif kind == _UINT32:
        out.append(str(_U32.unpack_from(data, at)[0]))
    elif kind == _INT64:
        out.append(str(_I64.unpack_from(data, at)[0]))
    elif kind == _UINT64:
        out.append(str(_U64.unpack_from(data, at)[0]))
    elif kind == _DOUBLE:
        out.append(double_text(_F64.unpack_from(data, at)[0]))
    elif kind == _STRING:
        length, at = _varint(data, at)
        out.append(_string(data[at:at + length].decode("utf-8", "replace")))
    elif kind == _OPAQUE:
        out.append(_opaque(data, at))
    else:
        raise ValueError(f"unknown JSON value type {kind:#x}")


def _literal(byte: int) -> str:
    names = {0: "null", 1: "true", 2: "false"}
    if byte not in names:
        raise ValueError(f"unexpected JSON literal {byte:#x}")
    return names[byte]


def _container(data: bytes, start: int, small: bool, is_object: bool, out: list[str]) -> None:
    index = _U16 if small else _U32
    step = index.size
    count = index.unpack_from(data, start)[0]
    at = start + 2 * step
    keys = []
    if is_object:
        for _ in range(count):
            offset, length = index.unpack_from(data, at)[0], _U16.unpack_from(data, at + step)[0]
            keys.append(data[start + offset:start + offset + length].decode("utf-8", "replace"))
            at += step + 2
    out.append("{" if is_object else "[")
    for i in range(count):
        if i:
            out.append(",")
        if is_object:
            out.append(_string(keys[i]) + ":")
        kind = data[at]
        inline = _inline(data, kind, at + 1, small)
        if inline is None:
            _value(data, kind, start + index.unpack_from(data, at + 1)[0], out)
        else:
            out.append(inline)
        at += 1 + step
    out.append("}" if is_object else "]")


def _inline(data: bytes, kind: int, at: int, small: bool) -> str | None:
    """A value held in its entry (None: the entry holds an offset)."""
    if kind == _LITERAL:
        return _literal(data[at])
    if kind == _INT16:
        return str(_I16.unpack_from(data, at)[0])
    if kind == _UINT16:
        return str(_U16.unpack_from(data, at)[0])
    if kind == _INT32 and not small:
        return str(_I32.unpack_from(data, at)[0])
    if kind == _UINT32 and not small:
        return str(_U32.unpack_from(data, at)[0])
    return None


def _varint(data: bytes, at: int) -> tuple[int, int]:
    length = 0
    for i in range(5):
        byte = data[at + i]
        length |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return length, at + i + 1
    raise ValueError("bad JSON length")


def double_text(value: float) -> str:
    """JsonStringFormatter.value(double): Java's Double.toString (the shortest digits, as
    Python's repr, in plain form from 1e-3 to 1e7) or, where that has an exponent, the
    exact decimal of the double (BigDecimal.toPlainString)."""
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(value)
    return format(Decimal(value), "f")


def _opaque(data: bytes, at: int) -> str:
    column_type = data[at]
    length, at = _varint(data, at + 1)
    body = data[at:at + length]
    if column_type in _DECIMALS:
        precision, scale = body[0], body[1]
        number: Decimal = decimal_reader(precision, scale)(body[2:], 0)[0]
        return format(abs(number) if not number else number, "f")  # no negative zero in Java
    if column_type in _DATE + _TIMES + _DATETIMES:
        raw = _I64.unpack_from(body, 0)[0]
        if column_type in _TIMES:
            return '"' + _time(raw) + '"'
        date, clock = _datetime(raw)
        return f'"{date}"' if column_type in _DATE else f'"{date} {clock}"'
    return '"' + base64.b64encode(body).decode("ascii") + '"'


def _two(value: int) -> str:
    return f"{value:02d}"


def _clock(hour: int, minute: int, second: int, micros: int) -> str:
    """appendTime: the fraction, if any, without its trailing zeros."""
    text = f"{_two(hour)}:{_two(minute)}:{_two(second)}"
    return text + "." + f"{micros:06d}".rstrip("0") if micros else text


def _datetime(raw: int) -> tuple[str, str]:
    """A packed DATE/DATETIME (MySQL's TIME_to_longlong_datetime_packed)."""
    value, micros = raw >> 24, raw & 0xFFFFFF
    year_month = (value >> 22) & 0x1FFFF
    date = f"{year_month // 13:04d}-{_two(year_month % 13)}-{_two((value >> 17) & 0x1F)}"
    return date, _clock((value >> 12) & 0x1F, (value >> 6) & 0x3F, value & 0x3F, micros)


def _time(raw: int) -> str:
    """A packed TIME, negative ones with their sign (TIME_to_longlong_time_packed)."""
    packed = abs(raw)
    value, micros = packed >> 24, packed & 0xFFFFFF
    clock = _clock((value >> 12) & 0x3FF, (value >> 6) & 0x3F, value & 0x3F, micros)
    return ("-" if raw < 0 else "") + clock


_library_read_binary_json = BinLogPacketWrapper.read_binary_json


def _read_binary_json(self: Any, size: int, is_partial: bool) -> Any:
    """A JSON column's value: Debezium's text, None for an empty value (NULL or '')."""
    if is_partial:
        return _library_read_binary_json(self, size, is_partial)
    length = self.read_uint_by_size(size)
    return text(self.read(length)) if length else None


def install() -> None:
    """Decode MySQL JSON columns to Debezium's text from now on (idempotent)."""
    BinLogPacketWrapper.read_binary_json = _read_binary_json
