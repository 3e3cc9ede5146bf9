"""The compiled row-image decoder (connector._native.RowImages) against the Python reference.

Random tables of every supported column type and random FULL images of them (valid
encodings at the types' edges, NULLs, random bytes for the fixed-width types, text in and
out of the column's charset): both decoders must give the same objects (types, Decimal
exponents and signs included), stop at the same position, or raise the same exception.
"""

from __future__ import annotations

import codecs
import datetime as dt
import struct
from decimal import Decimal
from functools import partial
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pymysqlreplication.column import Column
from pymysqlreplication.constants import FIELD_TYPE as F
from pymysqlreplication.row_event import RowsEvent

from connector.binlog import charsets
from connector.binlog.rowimages import _decoder
from connector.events import decoding
from tests.reference_rowimages import image_reader, reference_rows

_INTS = {F.TINY: 1, F.SHORT: 2, F.INT24: 3, F.LONG: 4, F.LONGLONG: 8}
charsets.install()  # MariaDB's latin1, as the reader decodes it
decoding.install()  # the codecs of utf16, ucs2, ... (connector/events/types.py installs it)
# MySQL charset names: utf8, latin1 (gtidmark's), ascii, cp1251 natively, utf16 and ucs2
# through their Python codecs, binary and an unknown one as bytes, None as bytes.decode()
_CHARSETS = [None, "utf8mb4", "latin1", "ascii", "cp1251", "utf16", "ucs2", "binary", "nosuch"]
_COMPRESSED = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
_FSP_BYTES = (0, 1, 1, 2, 2, 3, 3)


def _column(i: int, kind: int, **attrs: Any) -> Column:
    attrs.setdefault("unsigned", False)
    return Column(type=kind, name=f"c{i}", character_set_name=None, **attrs)


@st.composite
def _columns(draw: st.DrawFn) -> list[Column]:
    """1-20 columns of the supported types with random metadata (what table maps carry)."""
    count = draw(st.integers(1, 20))
    columns = []
    for i in range(count):
        kind = draw(st.sampled_from(
            [*_INTS, F.FLOAT, F.DOUBLE, F.VARCHAR, F.STRING, F.BLOB, F.NEWDECIMAL, F.DATE,
             F.DATETIME2, F.TIMESTAMP2, F.YEAR, F.ENUM, F.SET]))
        if kind in _INTS:
            columns.append(_column(i, kind, unsigned=draw(st.booleans())))
        elif kind in (F.VARCHAR, F.STRING, F.BLOB):
            charset = draw(st.sampled_from(_CHARSETS))
            extra = {"length_size": draw(st.integers(1, 4))} if kind == F.BLOB else \
                {"max_length": draw(st.sampled_from([1, 40, 255, 256, 65535]))}
            columns.append(_column(i, kind, **extra))
            columns[-1].character_set_name = charset
        elif kind == F.NEWDECIMAL:
            precision = draw(st.integers(1, 65))
            columns.append(_column(i, kind, precision=precision,
                                   decimals=draw(st.integers(0, min(precision, 30)))))
        elif kind in (F.DATETIME2, F.TIMESTAMP2):
            columns.append(_column(i, kind, fsp=draw(st.integers(0, 6))))
        elif kind == F.ENUM:
            members = draw(st.none() | st.lists(st.text(max_size=3), max_size=300))
            columns.append(_column(i, kind, size=draw(st.sampled_from([1, 2])),
                                   enum_values=members))
        elif kind == F.SET:
            members = draw(st.none() | st.lists(st.text(max_size=3), max_size=64)
                           | st.just([f"m{b}" for b in range(64)]))  # MySQL's most
            columns.append(_column(i, kind, size=draw(st.integers(1, 8)), set_values=members))
        else:
            columns.append(_column(i, kind))
    return columns


def _decimal_bytes(draw: st.DrawFn, precision: int, scale: int) -> bytes:
    """A valid NEWDECIMAL of (precision, scale): MySQL's digit groups, sign, inversion."""
    integral = draw(st.integers(0, 10 ** (precision - scale) - 1))
    fraction = draw(st.integers(0, 10 ** scale - 1))
    digits = str(integral).zfill(precision - scale) + str(fraction).zfill(scale)
    int_part, frac_part = digits[:precision - scale], digits[precision - scale:]
    out = b""
    head = len(int_part) % 9
    chunks = ([int_part[:head]] if head else []) + \
        [int_part[k:k + 9] for k in range(head, len(int_part), 9)] + \
        [frac_part[k:k + 9] for k in range(0, len(frac_part), 9)]
    for chunk in chunks:
        out += int(chunk).to_bytes(_COMPRESSED[len(chunk)], "big")
    raw = bytearray(out)
    raw[0] ^= 0x80
    if draw(st.booleans()):  # negative (-0 too): every bit inverted
        raw = bytearray(b ^ 0xFF for b in raw)
    return bytes(raw)


def _fraction(draw: st.DrawFn, fsp: int) -> bytes:
    micro = draw(st.integers(0, 999_999))
    size = _FSP_BYTES[fsp]
    return (micro // 10 ** (6 - 2 * size)).to_bytes(size, "big", signed=True) if size else b""


def _encoding(charset: str | None) -> str | None:
    """The Python codec of a charset as the library names it (None: none, bytes kept)."""
    try:
        return codecs.lookup(RowsEvent.charset_to_encoding(charset) if charset else "utf-8").name
    except LookupError:
        return None


def _width(column: Column) -> int:
    """Bytes of a fixed-width column's value."""
    kind = column.type
    if kind in _INTS:
        return _INTS[kind]
    if kind == F.NEWDECIMAL:
        p, s = column.precision, column.decimals
        return _COMPRESSED[(p - s) % 9] + 4 * ((p - s) // 9 + s // 9) + _COMPRESSED[s % 9]
    if kind in (F.DATETIME2, F.TIMESTAMP2):
        return (5 if kind == F.DATETIME2 else 4) + _FSP_BYTES[column.fsp]
    return {F.FLOAT: 4, F.DOUBLE: 8, F.DATE: 3, F.YEAR: 1}.get(kind) or column.size


def _valid(draw: st.DrawFn, column: Column) -> bytes:
    """A value as MySQL writes it, at the type's edges."""
    kind = column.type
    if kind in _INTS:
        bits = 8 * _INTS[kind]
        low, high = (0, 2 ** bits - 1) if column.unsigned else (-(2 ** (bits - 1)),
                                                                2 ** (bits - 1) - 1)
        return draw(st.integers(low, high) | st.sampled_from([low, high, 0])).to_bytes(
            bits // 8, "little", signed=not column.unsigned)
    if kind in (F.FLOAT, F.DOUBLE):
        return struct.pack("<f" if kind == F.FLOAT else "<d",
                           draw(st.floats(width=32 if kind == F.FLOAT else 64)))
    if kind in (F.VARCHAR, F.STRING, F.BLOB):
        size = column.length_size if kind == F.BLOB else (2 if column.max_length > 255 else 1)
        encoding = _encoding(column.character_set_name)
        text = draw(st.text(max_size=40))
        value = draw(st.binary(max_size=300)) if encoding is None or draw(st.booleans()) \
            else text.encode(encoding, errors="ignore")
        value = value[:2 ** (8 * size) - 1]
        return len(value).to_bytes(size, "little") + value
    if kind == F.NEWDECIMAL:
        return _decimal_bytes(draw, column.precision, column.decimals)
    if kind == F.DATE:
        d = draw(st.dates() | st.sampled_from([dt.date(2000, 2, 29)]))
        y, m, day = draw(st.sampled_from([(d.year, d.month, d.day), (0, 0, 0), (d.year, 0, 0),
                                           (0, d.month, d.day)])
                         | st.tuples(st.integers(0, 2 ** 15 - 1), st.integers(0, 15),
                                     st.integers(0, 31)))  # any field values: invalid dates
        return (y << 9 | m << 5 | day).to_bytes(3, "little")
    if kind == F.DATETIME2:
        t = draw(st.datetimes())
        y, m = draw(st.sampled_from([(t.year, t.month), (0, 0), (t.year, 0)]))
        fields = (y * 13 + m, t.day, t.hour, t.minute, t.second)
        if draw(st.booleans()):  # any field values: invalid dates and times
            fields = draw(st.tuples(st.integers(0, 0x1FFFF), st.integers(0, 31),
                                    st.integers(0, 31), st.integers(0, 63), st.integers(0, 63)))
        ym, day, hour, minute, second = fields
        packed = 1 << 39 | ym << 22 | day << 17 | hour << 12 | minute << 6 | second
        return packed.to_bytes(5, "big") + _fraction(draw, column.fsp)
    if kind == F.TIMESTAMP2:
        seconds = draw(st.integers(0, 2 ** 31 - 1) | st.sampled_from([0, 2 ** 31 - 1]))
        return seconds.to_bytes(4, "big") + _fraction(draw, column.fsp)
    if kind == F.YEAR:
        return bytes([draw(st.integers(0, 255))])
    if kind == F.ENUM:
        count = len(column.enum_values or ())
        index = draw(st.integers(0, max(count - 1, 0)))
        return index.to_bytes(column.size, "little")
    bits = 8 * column.size  # a SET
    return draw(st.integers(0, 2 ** bits - 1) | st.just(2 ** bits - 1)).to_bytes(column.size,
                                                                               "little")


@st.composite
def _image(draw: st.DrawFn, columns: list[Column]) -> bytes:
    """A FULL image: the NULL bitmap, then each non-NULL column's bytes."""
    nulls = [draw(st.integers(0, 9)) == 0 for _ in columns]
    out = sum(1 << i for i, null in enumerate(nulls) if null).to_bytes(
        (len(columns) + 7) // 8, "little")
    for column, null in zip(columns, nulls):
        if null:
            continue
        text = column.type in (F.VARCHAR, F.STRING, F.BLOB)
        if not text and draw(st.integers(0, 3)) == 0:
            out += draw(st.binary(min_size=_width(column), max_size=_width(column)))
        else:
            out += _valid(draw, column)
    return out


@st.composite
def _tables(draw: st.DrawFn) -> tuple[list[Column], bytes, bool]:
    """Columns, a rows event body of 1-4 images (pairs for an update), the update flag."""
    columns = draw(_columns())
    update = draw(st.booleans())
    count = draw(st.integers(1, 4)) * (2 if update else 1)
    return columns, b"".join(draw(_image(columns)) for _ in range(count)), update


def _typed(value: Any) -> Any:
    """Type and exact text of a decoded object: 1 == 1.0 and Decimal('1') == Decimal('1.0')
    must not pass; sets in order; images and update pairs item by item."""
    if isinstance(value, dict):
        return [(k, _typed(v)) for k, v in value.items()]
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, [_typed(v) for v in value])
    if isinstance(value, set):
        return ("set", sorted(value))
    if isinstance(value, Decimal):
        return ("Decimal", value.as_tuple())
    return (type(value).__name__, repr(value))


def _outcome(call: Any) -> Any:
    try:
        return _typed(call())
    except Exception as exc:  # noqa: BLE001 - the same exception type is the contract
        return ("raised", type(exc).__name__)


@settings(max_examples=400, deadline=None)
@given(_tables())
def test_rows_match_the_reference(table: tuple[list[Column], bytes, bool]) -> None:
    columns, body, update = table
    native, reference = _decoder(columns), image_reader(columns)
    assert native is not None and reference is not None
    data = b"\x00\x01" + body + b"\xaa\xbb\xcc\xdd"  # a header before, a checksum after
    end = len(data) - 4
    assert _outcome(partial(native.rows, data, 2, end, update)) == \
        _outcome(partial(reference_rows, reference, data, 2, end, update))


@settings(max_examples=300, deadline=None)
@given(_tables(), st.integers(0, 400))
def test_each_image_ends_where_the_references_does(
        table: tuple[list[Column], bytes, bool], cut: int) -> None:
    """Image by image, and on a body cut short (past the buffer Python slices short)."""
    columns, body, _ = table
    native, reference = _decoder(columns), image_reader(columns)
    assert native is not None and reference is not None
    for data in (body, body[:cut]):
        pos = 0
        while pos < len(data):
            ours = _outcome(partial(native.image, data, pos))
            try:
                image, after = reference(data, pos)
            except Exception as exc:  # noqa: BLE001 - compared with ours
                assert ours == ("raised", type(exc).__name__)
                break
            assert ours == _typed((image, after))
            pos = after


def test_decimal_groups_above_their_digits_carry_as_the_reference() -> None:
    """A 4-byte group of 0xFFFFFFFF (MySQL writes at most 999,999,999) still gives the
    reference's number."""
    columns = [_column(0, F.NEWDECIMAL, precision=20, decimals=9)]
    native, reference = _decoder(columns), image_reader(columns)
    assert native is not None and reference is not None
    for raw in (b"\x00" + b"\xff" * 10, b"\x00\x80" + b"\xff" * 9, b"\x00\x7f" + b"\x00" * 9):
        assert _outcome(partial(native.image, raw, 0)) == _outcome(partial(reference, raw, 0))
