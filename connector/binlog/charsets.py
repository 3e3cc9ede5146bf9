"""MariaDB's latin1 decoded as MariaDB decodes it, so no stored byte stops the stream.

MariaDB's latin1 is cp1252 in which the five bytes cp1252 leaves undefined (0x81, 0x8D,
0x8F, 0x90, 0x9D) stand for U+0081, U+008D, U+008F, U+0090, U+009D: a SELECT through a
utf8mb4 session returns those characters (measured). Python's cp1252, which
mysql-replication uses for latin1, raises on them, which stopped the connector. Both the
library's decoding and the compiled row decoder ask `RowsEvent.charset_to_encoding`;
for latin1 (which the library calls cp1252) it now names the codec below, so a streamed
value equals the SELECTed one.
(Debezium decodes the binlog with Java's Cp1252, which writes U+FFFD for the five.)
"""

from __future__ import annotations

import codecs
from typing import Any

from pymysqlreplication.row_event import RowsEvent

CODEC = "gtidmark_mariadb_latin1"


def _table() -> str:
    chars = []
    for byte in range(256):
        try:
            chars.append(bytes([byte]).decode("cp1252"))
        except UnicodeDecodeError:
            chars.append(chr(byte))
    return "".join(chars)


# the name of the table in Python's charmap codecs (encodings.cp1252, ...): the compiled row
# decoder takes such a table and decodes these columns natively (binlog/rowimages.py)
decoding_table = _table()
_ENCODING = codecs.charmap_build(decoding_table)


def _encode(text: str, errors: str = "strict") -> tuple[bytes, int]:
    return codecs.charmap_encode(text, errors, _ENCODING)


def _decode(data: Any, errors: str = "strict") -> tuple[str, int]:
    return codecs.charmap_decode(data, errors, decoding_table)


def _search(name: str) -> codecs.CodecInfo | None:
    return codecs.CodecInfo(_encode, _decode, name=CODEC) if name == CODEC else None


_library_encoding = RowsEvent.charset_to_encoding


def _charset_to_encoding(name: str) -> str:
    # The library names a column's charset by its Python encoding; only latin1 is "cp1252".
    return CODEC if name in ("cp1252", "latin1") else str(_library_encoding(name))


def install() -> None:
    """Register the codec and make latin1 columns decode through it (idempotent)."""
    if RowsEvent.charset_to_encoding is not _charset_to_encoding:
        codecs.register(_search)
        RowsEvent.charset_to_encoding = staticmethod(_charset_to_encoding)
