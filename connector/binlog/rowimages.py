"""Row images decoded in compiled code per table version, for the common column types.

mysql-replication 1.0.17 decodes every value through one long type dispatch and a read
call per field: with table maps parsed once (tablemaps.py), 58% of decoding 1-3-row
transactions. For a table whose columns are all of the types below, a decoder built once
from its table map (connector/native/src/rowimages.rs) reads a rows event's body directly
and gives the same values the library gives (after `_image`: an empty SET is ''), compared
value for value by tests/integration/test_rowimages.py and, on random bytes, with the
Python reference tests/reference_rowimages.py. Any other table, a MINIMAL image or a MySQL
partial JSON update goes the library's way.
"""

from __future__ import annotations

import codecs
import functools
import importlib
from typing import Any

from pymysqlreplication.constants import BINLOG, FIELD_TYPE
from pymysqlreplication.row_event import RowsEvent, UpdateRowsEvent

from connector.compiled import RowImages

_ROWS_EVENTS = frozenset({
    BINLOG.WRITE_ROWS_EVENT_V1, BINLOG.WRITE_ROWS_EVENT_V2, BINLOG.UPDATE_ROWS_EVENT_V1,
    BINLOG.UPDATE_ROWS_EVENT_V2, BINLOG.DELETE_ROWS_EVENT_V1, BINLOG.DELETE_ROWS_EVENT_V2})
_INTS = {FIELD_TYPE.TINY: 1, FIELD_TYPE.SHORT: 2, FIELD_TYPE.LONG: 4, FIELD_TYPE.LONGLONG: 8}
_KINDS = {FIELD_TYPE.INT24: "int24", FIELD_TYPE.FLOAT: "float", FIELD_TYPE.DOUBLE: "double",
          FIELD_TYPE.DATE: "date", FIELD_TYPE.YEAR: "year"}
# (name, kind, unsigned, size, precision or fsp, scale, codec, charset table, members)
ColumnShape = tuple[str, str, bool, int, int, int, str | None, tuple[int, ...] | None,
                    list[Any] | None]
_UNDEFINED = 0xFFFFFFFF  # a byte the charset has no character for


def _codec_of(column: Any) -> str | None:
    """The Python codec the library decodes a string column with (None: it keeps bytes)."""
    if column.character_set_name is None:
        return "utf-8"  # bytes.decode()
    try:
        return codecs.lookup(RowsEvent.charset_to_encoding(column.character_set_name)).name
    except LookupError:  # binary columns: the library keeps the bytes, but Python decodes
        return None  # b'' with any encoding name, so an empty value comes out as ''


@functools.cache
def _charset_table(codec: str) -> tuple[int, ...] | None:
    """Each byte's code point for a single-byte charset (latin-1, ascii, the charmap codecs:
    cp1251, ..., MariaDB's latin1 of binlog/charsets.py), decoded natively; None: call the
    codec."""
    if codec == "iso8859-1":
        return tuple(range(256))
    if codec == "ascii":
        return tuple(range(128)) + (_UNDEFINED,) * 128
    module = getattr(codecs.lookup(codec).decode, "__module__", None)
    table = getattr(importlib.import_module(module), "decoding_table", None) if module else None
    if not isinstance(table, str) or len(table) != 256:
        return None
    return tuple(_UNDEFINED if c == "\ufffe" else ord(c) for c in table)


def _shape(column: Any) -> ColumnShape | None:
    """What the compiled decoder needs of a column; None: a type it does not take."""
    kind, size, precision, scale = column.type, 0, 0, 0
    codec: str | None = None
    table: tuple[int, ...] | None = None
    members: list[Any] | None = None
    if kind in _INTS:
        name, size = "int", _INTS[kind]
    elif kind in _KINDS:
        name = _KINDS[kind]
    elif kind in (FIELD_TYPE.VARCHAR, FIELD_TYPE.STRING, FIELD_TYPE.BLOB):
        name, size = "str", column.length_size if kind == FIELD_TYPE.BLOB else (
            2 if column.max_length > 255 else 1)
        codec = _codec_of(column)
        table = None if codec is None else _charset_table(codec)
    elif kind == FIELD_TYPE.NEWDECIMAL:
        name, precision, scale = "decimal", column.precision, column.decimals
    elif kind in (FIELD_TYPE.DATETIME2, FIELD_TYPE.TIMESTAMP2):
        name = "datetime" if kind == FIELD_TYPE.DATETIME2 else "timestamp"
        precision = column.fsp
    elif kind in (FIELD_TYPE.ENUM, FIELD_TYPE.SET):
        name, size = ("enum", column.size) if kind == FIELD_TYPE.ENUM else ("set", column.size)
        values = column.enum_values if kind == FIELD_TYPE.ENUM else column.set_values
        members = None if values is None else list(values)
    else:
        return None
    return (column.name, name, bool(column.unsigned), size, precision, scale, codec, table,
            members)


def _decoder(columns: list[Any]) -> RowImages | None:
    """The compiled decoder of a table version's images; None: the library decodes them."""
    shapes = [_shape(column) for column in columns]
    if not shapes or any(s is None or not s[0] for s in shapes):
        return None
    try:
        return RowImages([s for s in shapes if s is not None])
    except ValueError:  # metadata MySQL does not write (DECIMAL(66), fsp 7, ...)
        return None


def _reader_of(table: Any) -> RowImages | None:
    """The table version's decoder, kept on the library's Table object (it lives as long)."""
    try:
        reader: RowImages | None = table.gtidmark_image_reader
    except AttributeError:
        reader = table.gtidmark_image_reader = _decoder(table.columns)
    return reader


def fast_rows(event: Any) -> list[Any] | None:
    """The event's rows (c/d: images, u: (before, after) pairs), or None: use the library."""
    if event.event_type not in _ROWS_EVENTS or not event.complete:
        return None
    table = event.table_map.get(event.table_id)
    count = event.number_of_columns
    full = _full_bitmaps_of(count)
    update = isinstance(event, UpdateRowsEvent)
    if table is None or len(table.columns) != count or event.columns_present_bitmap not in full \
            or (update and event.columns_present_bitmap2 not in full):
        return None
    image = _reader_of(table)
    if image is None:
        return None
    wrapper = event.packet
    data = wrapper.packet._data  # the raw packet: the rows start at its read position
    pos = wrapper.packet._position
    return image.rows(data, pos, pos + event.event_size - wrapper.read_bytes, update)


def body_rows(table: Any, data: bytes, pos: int, end: int, update: bool) -> list[Any] | None:
    """The rows of a rows event's body, `pos` at its column count, `end` at its last byte
    (connector/binlog/framing.py reads the header); None: use the library."""
    count = data[pos]
    if count < 251:
        pos += 1
    elif count == 252:
        count, pos = int.from_bytes(data[pos + 1:pos + 3], "little"), pos + 3
    else:  # 3 bytes (253): up to 16M columns; a table has at most 4096
        return None
    full = _full_bitmaps_of(count)
    width = (count + 7) // 8
    if table is None or len(table.columns) != count or data[pos:pos + width] not in full:
        return None
    pos += width
    if update:
        if data[pos:pos + width] not in full:
            return None
        pos += width
    image = _reader_of(table)
    if image is None:
        return None
    return image.rows(data, pos, end, update)


def missing_columns(event: Any, update: bool) -> tuple[int, ...]:
    """The columns the library's rows event leaves out of an image (binlog_row_image MINIMAL
    or NOBLOB, MariaDB's FULL_NODUP after-images), which the library decodes as NULL; ()
    when its images are whole. Per event, not per row: the columns-present bitmaps compared
    with the full ones of the column count (body_rows takes whole images only)."""
    full = _full_bitmaps_of(event.number_of_columns)
    present = event.columns_present_bitmap
    if present in full and (not update or event.columns_present_bitmap2 in full):
        return ()
    bitmaps = (present, event.columns_present_bitmap2) if update else (present,)
    return tuple(i for i in range(event.number_of_columns)
                 if not all(bitmap[i // 8] >> i % 8 & 1 for bitmap in bitmaps))


_full_bitmaps: dict[int, tuple[bytes, bytes]] = {}


def _full_bitmaps_of(count: int) -> tuple[bytes, bytes]:
    """The columns-present bitmaps of a FULL image of `count` columns: MariaDB clears the
    last byte's unused bits, MySQL sets them."""
    found = _full_bitmaps.get(count)
    if found is None:
        cleared = b"\xff" * (count // 8) + (bytes([(1 << count % 8) - 1]) if count % 8 else b"")
        found = _full_bitmaps[count] = (cleared, b"\xff" * len(cleared))
    return found

