"""MySQL's GTID wire formats that mysql-replication 1.0.17 lacks: tagged GTIDs (8.3+).

- GTID_LOG_EVENT (33): commit flag, 16-byte uuid, 8-byte transaction number, then (8.0.1+)
  a logical-clock type byte 2, two 8-byte clocks and the 7-byte immediate commit time in
  microseconds; its top bit set means the 7-byte original commit time follows.
- GTID_TAGGED_LOG_EVENT (42): MySQL's serialization framework: a header, then numbered
  fields; each integer (and each uuid byte) is a variable-length integer whose count of
  low one-bits in the first byte is its number of extra bytes; signed ones keep the sign
  in the lowest bit. Fields: 0 flags, 1 uuid, 2 transaction number, 3 tag, 4 and 5
  clocks, 6 immediate commit time, 7 original commit time (left out when the same).
- The GTID set a COM_BINLOG_DUMP_GTID request carries (`Gtid_set::encode`): untagged,
  a u64 count of uuids; tagged, that count in bytes 1-6 with the format byte 1 in bytes
  0 and 7, and each uuid's tag (varlen length + text) after it. Intervals are half-open.
Both were checked against a MySQL 9.7 server (tests/integration/test_mysql_stream.py).
"""

from __future__ import annotations

import struct

from pymysqlreplication import binlogstream

from connector.gtid import GtidSet, MysqlGtid

GTID_LOG_EVENT = 33
ANONYMOUS_GTID_LOG_EVENT = 34
PARTIAL_UPDATE_ROWS_EVENT = 39
TRANSACTION_PAYLOAD_EVENT = 40
GTID_TAGGED_LOG_EVENT = 42

_UUIDS: dict[bytes, str] = {}  # raw uuid -> text, for the few servers a stream has


def uuid_text(raw: bytes) -> str:
    text = _UUIDS.get(raw)
    if text is None:
        h = raw.hex()
        text = _UUIDS[raw] = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return text


_COMMIT_TIME_FOLLOWS = 1 << 55


def untagged_gtid(data: bytes, at: int, end: int) -> tuple[MysqlGtid, int]:
    """The GTID of a GTID_LOG_EVENT whose body is data[at:end], and its original commit
    time in microseconds (0 when the event has none)."""
    gtid = MysqlGtid(uuid_text(bytes(data[at + 1:at + 17])), "",
                     struct.unpack_from("<q", data, at + 17)[0])
    if end - at < 49 or data[at + 25] != 2:
        return gtid, 0
    immediate = int.from_bytes(data[at + 42:at + 49], "little")
    if immediate & _COMMIT_TIME_FOLLOWS and end - at >= 56:
        return gtid, int.from_bytes(data[at + 49:at + 56], "little")
    return gtid, immediate & ~_COMMIT_TIME_FOLLOWS


def read_varlen(data: bytes, at: int) -> tuple[int, int]:
    """(unsigned value, next offset) of the variable-length integer at `at`."""
    first = data[at]
    extra = 0
    while extra < 8 and first >> extra & 1:
        extra += 1
    if extra == 8:
        return int.from_bytes(data[at + 1:at + 9], "little"), at + 9
    raw = int.from_bytes(data[at:at + extra + 1], "little")
    return raw >> (extra + 1), at + extra + 1


def _signed(value: int) -> int:
    return -(value >> 1) - 1 if value & 1 else value >> 1


def tagged_gtid(data: bytes, at: int, end: int) -> tuple[MysqlGtid, int]:
    """The GTID of a GTID_TAGGED_LOG_EVENT whose body is data[at:end], and its original
    commit time in microseconds (0 when the event has none)."""
    _, at = read_varlen(data, at)  # the message's format
    _, at = read_varlen(data, at)  # its size
    _, at = read_varlen(data, at)  # the last field a reader must understand
    uuid = b""
    gno = 0
    tag = ""
    immediate = original = 0
    while at < end:
        field, at = read_varlen(data, at)
        if field == 0:
            _, at = read_varlen(data, at)
        elif field == 1:
            raw = bytearray()
            for _ in range(16):
                byte, at = read_varlen(data, at)
                raw.append(byte)
            uuid = bytes(raw)
        elif field == 2:
            value, at = read_varlen(data, at)
            gno = _signed(value)
        elif field == 3:
            length, at = read_varlen(data, at)
            tag = bytes(data[at:at + length]).decode("ascii")
            at += length
        elif field in (4, 5):
            _, at = read_varlen(data, at)
        elif field == 6:
            immediate, at = read_varlen(data, at)
        elif field == 7:
            original, at = read_varlen(data, at)
        else:
            break
    if len(uuid) != 16 or gno < 1:
        raise ValueError("a tagged GTID event without its uuid or transaction number")
    return MysqlGtid(uuid_text(uuid), tag.lower(), gno), original or immediate


def _varlen(value: int) -> bytes:
    extra = 0
    while extra < 8 and value >= 1 << (7 * (extra + 1)):
        extra += 1
    if extra == 8:
        return b"\xff" + value.to_bytes(8, "little")
    marker = (1 << extra) - 1
    return ((value << (extra + 1)) | marker).to_bytes(extra + 1, "little")


def encode_gtid_set(gtids: GtidSet) -> bytes:
    """`Gtid_set::encode` of `gtids`, tagged format only when a tag is present."""
    sets = gtids.intervals()
    tagged = any(tag for _, tag in sets)
    count = len(sets)
    out = bytearray((1 | count << 8 | 1 << 56).to_bytes(8, "little") if tagged
                    else count.to_bytes(8, "little"))
    for (uuid, tag), intervals in sets.items():
        out += bytes.fromhex(uuid.replace("-", ""))
        if tagged:
            out += _varlen(len(tag)) + tag.encode("ascii")
        out += len(intervals).to_bytes(8, "little")
        for start, stop in intervals:
            out += struct.pack("<QQ", start, stop + 1)
    return bytes(out)


class DumpGtids:
    """What the reader passes as `auto_position` on MySQL: always truthy (an empty set
    asks for the whole binlog, not for "the current position"), encoded here."""

    def __init__(self, gtids: GtidSet) -> None:
        self.gtids = gtids

    def __str__(self) -> str:
        return str(self.gtids)


class _EncodedSet:
    """Stands in for mysql-replication's GtidSet in its COM_BINLOG_DUMP_GTID request."""

    def __init__(self, position: DumpGtids | str) -> None:
        gtids = position.gtids if isinstance(position, DumpGtids) else GtidSet.parse(position)
        self._encoded = encode_gtid_set(gtids)

    @property
    def encoded_length(self) -> int:
        return len(self._encoded)

    def encoded(self) -> bytes:
        return self._encoded


def install() -> None:
    """The library's dump request encodes GTID sets with our encoder (tags included)."""
    binlogstream.GtidSet = _EncodedSet
