"""MySQL's binary JSON as the text Debezium's MySQL connector streams (connector/events/mysql_json).

The expected texts are what Debezium 3.6.3 wrote for the same documents in the conformance
run on MySQL 9.7 (tests/conformance), except where it misprints the value (negative TIME,
unsigned 32-bit numbers): there, the stored value in its form.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest

from connector.events.mysql_json import double_text, text

# A small encoder of MySQL's binary JSON (sql/json_binary.cc), for the cases below.
SMALL, LARGE = False, True


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


class Opaque:
    def __init__(self, column_type: int, body: bytes) -> None:
        self.column_type, self.body = column_type, body


class U32(int):
    """An unsigned 32-bit number (MySQL's UINT32 type)."""


def _scalar(value: Any) -> tuple[int, bytes]:
    if value is None or isinstance(value, bool):
        return 4, bytes([0 if value is None else 1 if value else 2])
    if isinstance(value, U32):
        return 8, struct.pack("<I", value)
    if isinstance(value, int):
        if -(1 << 15) <= value < 1 << 15:
            return 5, struct.pack("<h", value)
        if -(1 << 31) <= value < 1 << 31:
            return 7, struct.pack("<i", value)
        if value < 1 << 63:
            return 9, struct.pack("<q", value)
        return 10, struct.pack("<Q", value)
    if isinstance(value, float):
        return 11, struct.pack("<d", value)
    if isinstance(value, str):
        data = value.encode()
        return 12, _varint(len(data)) + data
    if isinstance(value, Opaque):
        return 15, bytes([value.column_type]) + _varint(len(value.body)) + value.body
    raise TypeError(value)


def _container(value: dict[str, Any] | list[Any], large: bool) -> tuple[int, bytes]:
    index = "<I" if large else "<H"
    step = struct.calcsize(index)
    items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    is_object = isinstance(value, dict)
    header = 2 * step + len(items) * (1 + step) + (len(items) * (step + 2) if is_object else 0)
    keys = b"".join(k.encode() for k, _ in items) if is_object else b""
    key_entries, offset = b"", header
    for k, _ in items:
        if k is not None:
            key_entries += struct.pack(index, offset) + struct.pack("<H", len(k.encode()))
            offset += len(k.encode())
    value_entries, body = b"", b""
    for _, v in items:
        kind, data = _container(v, large) if isinstance(v, dict | list) else _scalar(v)
        inline = kind in (4, 5, 6) or (large and kind in (7, 8))
        if inline:
            value_entries += bytes([kind]) + data.ljust(step, b"\0")
        else:
            value_entries += bytes([kind]) + struct.pack(index, offset + len(body))
            body += data
    size = header + len(keys) + len(body)
    kind = (1 if large else 0) if is_object else (3 if large else 2)
    return kind, struct.pack(index, len(items)) + struct.pack(index, size) + key_entries + \
        value_entries + keys + body


def binary(value: Any, large: bool = SMALL) -> bytes:
    kind, data = _container(value, large) if isinstance(value, dict | list) else _scalar(value)
    return bytes([kind]) + data


def _packed_datetime(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0,
                     micros: int = 0) -> bytes:
    ymd = ((y * 13 + mo) << 5) | d
    return struct.pack("<q", ((((ymd << 17) | (h << 12) | (mi << 6) | s)) << 24) + micros)


def _packed_time(negative: bool, h: int, mi: int, s: int, micros: int = 0) -> bytes:
    packed = (((h << 12) | (mi << 6) | s) << 24) + micros
    return struct.pack("<q", -packed if negative else packed)


# Debezium's texts for the doubles 1e300 and 1e-7: the exact decimal of the double.
E300 = ("1000000000000000052504760255204420248704468581108159154915854115511802457988908195786"
        "3713750804478640437044438328838781769425232353604305756447921847867069828483872009265"
        "7580373783023379478809005936895323497079994508111903896764088007465274278014249457925"
        "8788820056842838115669472196386865459400540160")
E_7 = "0.0000000999999999999999954748111825886258685613938723690807819366455078125"

CASES = [
    ({"a": {"b": [1, 2.5, "x", None, True]}, "u": "ü"},
     '{"a":{"b":[1,2.5,"x",null,true]},"u":"ü"}'),
    ([[[]], {}, [{}]], "[[[]],{},[{}]]"),
    ({"": "empty key", "k\"q": 1}, '{"":"empty key","k\\"q":1}'),
    ("zürich ☃ 𝄞 \t\n\r\b\f \x01 \x1f /", '"zürich ☃ 𝄞 \\t\\n\\r\\b\\f \\u0001 \\u001F /"'),
    (18446744073709551615, "18446744073709551615"),
    (-9223372036854775808, "-9223372036854775808"),
    ([1e300, 1.0e-7, 0.001, 1e7, -0.0, 100.0, 3.141592653589793],
     f"[{E300},{E_7},0.001,10000000,-0.0,100.0,3.141592653589793]"),
    (Opaque(246, bytes([5, 2, 0x80, 0x01, 0x32])), "1.50"),
    ({"d": Opaque(246, bytes([10, 3, 0x7F, 0xFF, 0xFF, 0xF3, 0xFE, 0xA6]))}, '{"d":-12.345}'),
    (Opaque(10, _packed_datetime(2024, 1, 2)), '"2024-01-02"'),
    (Opaque(12, _packed_datetime(1999, 12, 31, 23, 59, 59)), '"1999-12-31 23:59:59"'),
    (Opaque(7, _packed_datetime(2024, 1, 2, 3, 4, 5, 123400)), '"2024-01-02 03:04:05.1234"'),
    ([Opaque(11, _packed_time(False, 12, 34, 56, 500000))], '["12:34:56.5"]'),
    (Opaque(252, b"\x00\xff"), '"AP8="'),
    # where Debezium misprints the stored value (see the module): the value, in its form
    ([Opaque(11, _packed_time(True, 0, 0, 1)), Opaque(11, _packed_time(True, 838, 59, 59)),
      Opaque(11, _packed_time(True, 1, 2, 3, 500000)), Opaque(11, _packed_time(True, 0, 0, 0, 1))],
     '["-00:00:01","-838:59:59","-01:02:03.5","-00:00:00.000001"]'),
    ({"max": U32(4294967295), "u32": U32(3000000000)}, '{"max":4294967295,"u32":3000000000}'),
]


@pytest.mark.parametrize(("value", "expected"), CASES)
def test_text_is_what_debezium_streams(value: Any, expected: str) -> None:
    assert text(binary(value)) == expected


def test_large_documents_and_their_inline_values() -> None:
    doc = {"i32": -2000000000, "pad": "p" * 70000, "u16": 65535, "u32": U32(3000000000)}
    assert text(binary(doc, LARGE)) == \
        '{"i32":-2000000000,"pad":"' + "p" * 70000 + '","u16":65535,"u32":3000000000}'
    assert text(binary([True, None, -5, U32(7)], LARGE)) == "[true,null,-5,7]"


def test_a_text_value_passes_as_it_is() -> None:
    assert text(b'{"a": 1}') == '{"a": 1}'  # JsonBinary.isJSONString: MariaDB's JSON text


@pytest.mark.parametrize(("value", "expected"), [
    (0.0, "0.0"), (1.5, "1.5"), (9999999.5, "9999999.5"), (1e300, E300), (1e-7, E_7),
    (-1e22, "-10000000000000000000000"),
    (1.2345678901234568e29, "123456789012345677877719597056"),
    (-1.5e-10, ("-0.00000000014999999999999999900248106175413252694195165304336114786565303802"
                "490234375"))])
def test_doubles_as_java_then_plain_digits(value: float, expected: str) -> None:
    assert double_text(value) == expected
