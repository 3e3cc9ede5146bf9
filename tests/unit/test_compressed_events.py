"""MariaDB's compressed fields (log_bin_compress): a header byte, a big-endian length, zlib."""

from __future__ import annotations

import zlib

import pytest

from connector.binlog.framing import UncapturableEvent, uncompressed


def mariadb_compressed(text: bytes) -> bytes:
    """As MariaDB's binlog_buf_compress writes it: 0x80 | width, the length big-endian."""
    width = max(1, (len(text).bit_length() + 7) // 8)
    return bytes([0x80 | width]) + len(text).to_bytes(width, "big") + zlib.compress(text)


def test_a_compressed_query_longer_than_255_bytes_inflates_whole() -> None:
    query = ("ALTER TABLE t ADD COLUMN c VARCHAR(30) COMMENT '" + "x" * 700 + "'").encode()
    assert uncompressed(mariadb_compressed(query)) == query


@pytest.mark.parametrize("field", [
    b"", b"\x01\x05abc",  # no compressed header
    b"\x91\x05" + zlib.compress(b"hello"),  # an algorithm other than zlib
    b"\x81\x06" + zlib.compress(b"hello"),  # the length says 6, the stream holds 5
    b"\x81\x05not zlib",
])
def test_a_field_that_does_not_inflate_stops_with_one_line(field: bytes) -> None:
    with pytest.raises(UncapturableEvent, match="compressed event"):
        uncompressed(field)
