"""Corrections to mysql-replication 1.0.17's value decoding, for every process that decodes
the binlog: `install()` runs when connector/events/types.py is imported (the reader does).

- MySQL's binary JSON reaches the converters as the text Debezium writes (mysql_json.py).
- MySQL 9's VECTOR (type 242), which the library does not know: its table-map metadata
  (one byte, the length's size) was not read, which shifted every later column's, and its
  rows raised. Once the table map is read, such a column is a binary BLOB marked `vector`:
  its rows decode as bytes, the little-endian float32s Debezium's FloatVector takes apart
  (connector/events/values.py). The table map's optional metadata of a table
  with a VECTOR also holds a field type the library does not know (13, the vector
  dimensions), on which it raised: such fields are dropped before it reads them.
- ENUM and SET member names, which the table map holds in the column's character set: the
  library decoded them as UTF-8 and made any other name '' (a latin1 'ä' was lost, in the
  schema's `allowed` list and in every value). They are decoded in the column's charset.
- Character sets the library names by MySQL's name, which Python reads otherwise: MySQL
  stores utf16, utf32 and ucs2 big-endian, while Python's `utf16`/`utf32` sniff a byte-order
  mark and read little-endian without one (a utf32 value stopped the stream); `ucs2`,
  `utf16le` and `macce` are no Python codec names, so their values stayed bytes. Debezium
  reads them with Java's UTF-16/UTF-32 (big-endian), UTF-16LE and MacCentralEurope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pymysqlreplication import row_event
from pymysqlreplication.column import Column
from pymysqlreplication.constants import BINLOG, FIELD_TYPE

from connector.events import mysql_json

PYTHON_CODECS = {"utf16": "utf-16-be", "utf32": "utf-32-be", "ucs2": "utf-16-be",
                 "utf16le": "utf-16-le", "macce": "mac-latin2"}


@dataclass(frozen=True)
class _Codec:
    """What `RowsEvent.charset_to_encoding` reads of a charset: its Python codec name."""

    encoding: str


_CODECS = {name: _Codec(codec) for name, codec in PYTHON_CODECS.items()}
_library_charset_by_name = row_event.charset_by_name


def _charset_by_name(name: str) -> Any:
    return _CODECS.get(name) or _library_charset_by_name(name)


VECTOR = 242  # MYSQL_TYPE_VECTOR
_library_column_definition = Column._Column__parse_column_definition


def _column_definition(self: Any, column_type: int, packet: Any) -> None:
    _library_column_definition(self, column_type, packet)
    if column_type == VECTOR:
        self.length_size = packet.read_uint8()


_KNOWN_METADATA = frozenset(m.value for m in row_event.MetadataFieldType) - {
    row_event.MetadataFieldType.UNKNOWN_METADATA_FIELD_TYPE.value}
_library_optional_metadata = row_event.TableMapEvent._get_optional_meta_data


def _length_coded(data: bytes, at: int) -> tuple[int, int]:
    """A length-coded integer at `at`: its value and the position after it."""
    first = data[at]
    if first < 251:
        return first, at + 1
    size = {252: 2, 253: 3, 254: 8}.get(first)
    if size is None:
        raise ValueError(f"bad length-coded integer {first:#x} in a table map")
    return int.from_bytes(data[at + 1:at + 1 + size], "little"), at + 1 + size


def _optional_metadata(self: Any) -> Any:
    """The library's reading of a table map's optional metadata (type, length, value
    fields up to the checksum), without the fields of types it does not know."""
    wrapper = self.packet
    packet = wrapper.packet
    if wrapper._BinLogPacketWrapper__data_buffer:
        return _library_optional_metadata(self)
    data, start = packet._data, packet._position
    end = len(data) - BINLOG.BINLOG_CHECKSUM_LEN
    kept, at, dropped = [], start, False
    while at < end:
        length, value_at = _length_coded(data, at + 1)
        if data[at] in _KNOWN_METADATA:
            kept.append(data[at:value_at + length])
        else:
            dropped = True
        at = value_at + length
    if dropped:
        packet._data = data[:start] + b"".join(kept) + data[end:]
    return _library_optional_metadata(self)


def _read_type_values(self: Any, length: int) -> list[list[bytes]] | None:
    """The ENUM/SET member lists of a table map as stored (decoded by `_sync_column_info`)."""
    packet = self.packet
    read_until = packet.read_bytes + length
    if packet.read_bytes >= read_until:
        return None
    result = []
    while packet.read_bytes < read_until:
        count = packet.read_length_coded_binary()
        result.append([packet.read_variable_length_string() for _ in range(count)])
    return result


_library_sync_column_info = row_event.TableMapEvent._sync_column_info


def _sync_column_info(self: Any) -> None:
    _library_sync_column_info(self)
    for column in self.columns:
        if column.type == VECTOR:  # from here on a binary BLOB, marked (connector/schema.py)
            column.type, column.character_set_name, column.vector = FIELD_TYPE.BLOB, "binary", True
        for attribute in ("enum_values", "set_values"):
            members = getattr(column, attribute, None)
            if members and any(isinstance(m, bytes) for m in members):
                name = column.character_set_name
                codec = row_event.RowsEvent.charset_to_encoding(name) if name else "utf-8"
                setattr(column, attribute, [_member(m, codec) for m in members])


def _member(name: bytes | str, codec: str) -> str:
    if isinstance(name, str):
        return name
    try:
        return name.decode(codec, "replace")
    except LookupError:
        return name.decode("utf-8", "replace")


def install() -> None:
    """Idempotent. The library's `RowsEvent.charset_to_encoding` (which gtidmark's row
    decoders and connector/binlog/charsets.py also ask) looks the name up here."""
    row_event.charset_by_name = _charset_by_name
    Column._Column__parse_column_definition = _column_definition
    row_event.TableMapEvent._get_optional_meta_data = _optional_metadata
    row_event.TableMapEvent._read_type_values = _read_type_values
    row_event.TableMapEvent._sync_column_info = _sync_column_info
    mysql_json.install()
