"""Our own framing of the binlog events the reader handles, on mysql-replication's connection.

mysql-replication 1.0.17 wraps every packet in a BinLogPacketWrapper and an event object
(a read call per field, keyword plumbing, filters) before the reader sees it: 43% of the
reader process on 1-3-row transactions (py-spy), where a transaction is ~5 events. Here the
packets are read from the library's connection (its handshake, registration, GTID start,
checksum setting, error packets stay the library's) and the hot event types are parsed with
struct. Anything else, a table version seen for the first time and rows the compiled
decoders do not cover go through the library's own classes, with its bookkeeping (table map,
format description) kept as its fetchone keeps it. tests/integration/test_framing.py
compares every transaction with the library's path.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.constants import BINLOG
from pymysqlreplication.event import (
    GtidEvent,
    HeartbeatLogEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    XAPrepareEvent,
    XidEvent,
)
from pymysqlreplication.packet import BinLogPacketWrapper
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)

from connector.binlog import mysql_wire
from connector.binlog.rowimages import body_rows
from connector.gtid import MariaGtid, MysqlGtid

# What frames() yields (a tuple, its kind first):
# (GTID, log_pos, ts_us, server_id, gtid, flags, start_pos): ts_us MySQL's commit time,
# else the header's second; MariaDB's flags, None on MySQL; log_pos is where the event
# ends (the next one starts), start_pos where it starts.
GTID = 0
QUERY = 1  # (QUERY, log_pos, thread, schema, query, start_pos)
XID = 2  # (XID, log_pos)
XA_PREPARE = 3  # (XA_PREPARE, log_pos, one_phase, (format_id, gtrid, bqual))
ROTATE = 4  # (ROTATE, next_binlog)
HEARTBEAT = 5  # (HEARTBEAT,)
TABLE_MAP = 6  # (TABLE_MAP, table_id, schema_of(event))
ROWS = 7  # (ROWS, table_id, op, rows, start_pos, event): rows None -> the library's event
COMPRESSED_ROWS = 8  # (COMPRESSED_ROWS, table_id): MariaDB's log_bin_compress, not decoded
# (COUNTED,): an event inside a transaction the reader ignores but Debezium's offsets count
# (connector/binlog/resume_skip.py): MySQL's ROWS_QUERY, which the server sends whenever
# binlog_rows_query_log_events wrote it. MariaDB's ANNOTATE_ROWS comes only when asked
# for, and neither this reader nor Debezium (without include.query) asks.
COUNTED = 9

_HEADER = struct.Struct("<IBIIIH")  # after the OK byte: timestamp, type, server, size, next pos
_GTID = struct.Struct("<QIB")  # seq_no, domain, flags
_QUERY = struct.Struct("<IIBHH")  # thread, exec time, schema length, error code, status length
_XA = struct.Struct("<BIII")  # one phase, format id, gtrid length, bqual length
_ROWS_OPS = {BINLOG.WRITE_ROWS_EVENT_V1: "c", BINLOG.UPDATE_ROWS_EVENT_V1: "u",
             BINLOG.DELETE_ROWS_EVENT_V1: "d", BINLOG.WRITE_ROWS_EVENT_V2: "c",
             BINLOG.UPDATE_ROWS_EVENT_V2: "u", BINLOG.DELETE_ROWS_EVENT_V2: "d"}
_V2 = frozenset({BINLOG.WRITE_ROWS_EVENT_V2, BINLOG.UPDATE_ROWS_EVENT_V2,
                 BINLOG.DELETE_ROWS_EVENT_V2})
# MariaDB's log_bin_compress=ON: events above log_bin_compress_min_len (256 bytes) hold
# their query text or their rows zlib-compressed.
QUERY_COMPRESSED_EVENT = 165
_COMPRESSED_ROWS = frozenset(range(166, 172))  # write, update, delete; v1, then v2
# LOAD DATA logged as a statement: a query event (its post-header 13 bytes longer).
_QUERIES = frozenset({BINLOG.QUERY_EVENT, BINLOG.EXECUTE_LOAD_QUERY_EVENT,
                      QUERY_COMPRESSED_EVENT})
_KNOWN_POST_HEADERS = {BINLOG.QUERY_EVENT: 13, BINLOG.EXECUTE_LOAD_QUERY_EVENT: 26,
                       QUERY_COMPRESSED_EVENT: 13,
                       BINLOG.TABLE_MAP_EVENT: 8,
                       **{kind: 10 if kind in _V2 else 8 for kind in _ROWS_OPS}}
_FILTERS = ("only_tables", "ignored_tables", "only_schemas", "ignored_schemas",
            "freeze_schema")
_REFUSED = {
    mysql_wire.ANONYMOUS_GTID_LOG_EVENT: "a transaction without a GTID (gtid_mode is not ON)",
    mysql_wire.PARTIAL_UPDATE_ROWS_EVENT: "a partial JSON update (a session set "
                                          "binlog_row_value_options=PARTIAL_JSON)",
    mysql_wire.TRANSACTION_PAYLOAD_EVENT: "a compressed transaction (a session set "
                                          "binlog_transaction_compression=ON)",
}
Framing = Callable[[BinLogStreamReader, Callable[[TableMapEvent], Any]],
                  Iterator[tuple[Any, ...]]]
MAX_TABLE_MAPS = 4096  # distinct table-map bodies kept (all dropped when full)


class UncapturableEvent(RuntimeError):
    """An event whose rows cannot be captured: the stream stops with one line."""


def _private(stream: BinLogStreamReader, name: str) -> Any:
    return getattr(stream, f"_BinLogStreamReader__{name}")


def frames(stream: BinLogStreamReader,
           schema_of: Callable[[TableMapEvent], Any]) -> Iterator[tuple[Any, ...]]:
    """The stream's events as tuples (see the kinds above); ends where the library's does."""
    if not _private(stream, "connected_stream"):
        _private(stream, "connect_to_stream")()
    if not _private(stream, "connected_ctl"):
        _private(stream, "connect_to_ctl")()
    if _private(stream, "verify_checksum") or any(_private(stream, f) for f in _FILTERS):
        raise ValueError("frames() reads unfiltered streams without checksum verification")
    trailer = 4 if _private(stream, "use_checksum") else 0
    read_packet = stream._stream_connection._read_packet
    maps: dict[bytes, tuple[int, Any, Any]] = {}  # body -> (table id, library table, schema)
    headers = _post_headers(stream)
    while True:
        packet = read_packet()
        data = packet._data
        if data[0] != 0 or len(data) < 7:
            if packet.is_eof_packet():
                stream.close()
                return
            continue
        timestamp, kind, server_id, size, log_pos, _ = _HEADER.unpack_from(data, 1)
        end = size + 1 - trailer  # the body is data[20:end]
        op = _ROWS_OPS.get(kind)
        if op is not None:
            at = 20 + headers.get(kind, 8)
            table_id = int.from_bytes(data[20:26], "little")
            table = stream.table_map.get(table_id)
            if table is None:
                continue  # its table map was not read (the library skips it too)
            rows = None
            if kind not in _V2 or (data[28] | data[29] << 8) <= 2:  # V2: no extra data
                rows = body_rows(table, data, at, end, op == "u")
            if rows is None:
                event = _library_event(stream, packet)
                if event is None:
                    continue
                yield ROWS, table_id, op, None, log_pos - size, event
            else:
                yield ROWS, table_id, op, rows, log_pos - size, None
        elif kind == BINLOG.MARIADB_GTID_EVENT:
            seq, domain, flags = _GTID.unpack_from(data, 20)
            yield (GTID, log_pos, timestamp * 1_000_000, server_id,
                   MariaGtid(domain, server_id, seq), flags, log_pos - size)
        elif kind == mysql_wire.GTID_LOG_EVENT:
            gtid, commit_us = mysql_wire.untagged_gtid(data, 20, end)
            yield (GTID, log_pos, commit_us or timestamp * 1_000_000, server_id, gtid, None,
                   log_pos - size)
        elif kind == mysql_wire.GTID_TAGGED_LOG_EVENT:
            gtid, commit_us = mysql_wire.tagged_gtid(data, 20, end)
            yield (GTID, log_pos, commit_us or timestamp * 1_000_000, server_id, gtid, None,
                   log_pos - size)
        elif kind in _REFUSED:
            raise UncapturableEvent(_REFUSED[kind])
        elif kind == BINLOG.XID_EVENT:
            yield XID, log_pos
        elif kind == BINLOG.TABLE_MAP_EVENT:
            body = data[20:end]
            known = maps.get(body)
            if known is None:
                event = _library_event(stream, packet)
                if event is None:
                    continue
                known = (event.table_id, event.table_obj, schema_of(event))
                if len(maps) >= MAX_TABLE_MAPS:
                    maps.clear()
                maps[body] = known
            else:
                stream.table_map[known[0]] = known[1]
            yield TABLE_MAP, known[0], known[2]
        elif kind in _QUERIES:
            thread, _, schema_length, _, status_length = _QUERY.unpack_from(data, 20)
            at = 20 + headers.get(kind, 13) + status_length
            schema = data[at:at + schema_length].decode("utf-8", errors="replace")
            text = data[at + schema_length + 1:end]
            if kind == QUERY_COMPRESSED_EVENT:
                text = uncompressed(text)
            query = text.decode("utf-8", errors="backslashreplace")
            yield QUERY, log_pos, thread, schema, query, log_pos - size
        elif kind in _COMPRESSED_ROWS:
            table_id = int.from_bytes(data[20:26], "little")
            if table_id in stream.table_map:  # else its table map was not read (as above)
                yield COMPRESSED_ROWS, table_id
        elif kind == BINLOG.XA_PREPARE_EVENT:
            one_phase, format_id, gtrid, bqual = _XA.unpack_from(data, 20)
            xid = (format_id, data[33:33 + gtrid], data[33 + gtrid:33 + gtrid + bqual])
            yield XA_PREPARE, log_pos, bool(one_phase), xid
        elif kind == BINLOG.HEARTBEAT_LOG_EVENT:
            yield HEARTBEAT,
        elif kind == BINLOG.ROWS_QUERY_LOG_EVENT:
            yield COUNTED,
        elif kind == BINLOG.ROTATE_EVENT:
            stream.log_pos = int.from_bytes(data[20:28], "little")
            stream.log_file = next_binlog = data[28:end].decode()
            if timestamp:  # as the library's fetchone: a real rotate may mean a restart,
                stream.table_map = {}  # table ids are not persistent across one
            yield ROTATE, next_binlog
        elif kind == BINLOG.FORMAT_DESCRIPTION_EVENT:
            _library_event(stream, packet)
            headers = _post_headers(stream)


def uncompressed(field: bytes) -> bytes:
    """A MariaDB compressed field: one byte 0b100 (zlib) then the width of the length, the
    length in that many big-endian bytes, then the zlib stream."""
    width = field[0] & 0x07 if field else 0
    if not field or field[0] & 0xF0 != 0x80 or not 1 <= width <= 4:
        raise UncapturableEvent("a compressed event of an unknown format (log_bin_compress)")
    size = int.from_bytes(field[1:1 + width], "big")
    try:
        text = zlib.decompress(field[1 + width:])
    except zlib.error as exc:
        raise UncapturableEvent(f"a compressed event that does not inflate ({exc})") from None
    if len(text) != size:
        raise UncapturableEvent(f"a compressed event of {len(text)} bytes that says {size}")
    return text


def _post_headers(stream: BinLogStreamReader) -> dict[int, int]:
    """Post-header lengths the format description declares, for the types parsed here."""
    declared = _private(stream, "post_header_lengths") or ()
    lengths = {}
    for kind, known in _KNOWN_POST_HEADERS.items():
        length = declared[kind - 1] if kind - 1 < len(declared) else known
        if length == 0:
            length = known  # a type this server never writes (MySQL 8+: v1 rows events)
        elif length < known:
            raise ValueError(f"binlog event type {kind} declares a post-header of {length} "
                             f"bytes, shorter than its {known}")
        lengths[kind] = length
    return lengths


def _library_event(stream: BinLogStreamReader, packet: Any) -> Any:
    """The library's event for a packet, with the bookkeeping of its fetchone (1.0.17)."""
    wrapper = BinLogPacketWrapper(
        packet, stream.table_map, stream._ctl_connection, stream.mysql_version,
        _private(stream, "use_checksum"), _private(stream, "allowed_events_in_packet"),
        None, None, None, None, False, _private(stream, "ignore_decode_errors"), False,
        _private(stream, "optional_meta_data"), _private(stream, "enable_logging"),
        _private(stream, "use_column_name_cache"), _private(stream, "post_header_lengths"))
    event = wrapper.event
    if event is None:
        return None
    if wrapper.event_type == BINLOG.FORMAT_DESCRIPTION_EVENT:
        stream.mysql_version = event.mysql_version
        stream._BinLogStreamReader__post_header_lengths = event.post_header_len
    elif wrapper.event_type == BINLOG.TABLE_MAP_EVENT:
        stream.table_map[event.table_id] = event.get_table()
    return event


def library_frames(stream: BinLogStreamReader,
                   schema_of: Callable[[TableMapEvent], Any]) -> Iterator[tuple[Any, ...]]:
    """The same tuples from the library's own events and row decoding: the reference
    frames() is compared with (tests/integration/test_framing.py)."""
    for event in stream:
        if isinstance(event, RotateEvent):
            yield ROTATE, event.next_binlog
        elif isinstance(event, HeartbeatLogEvent):
            yield HEARTBEAT,
        elif isinstance(event, MariadbGtidEvent):
            yield (GTID, event.packet.log_pos, event.timestamp * 1_000_000, event.server_id,
                   MariaGtid(event.domain_id, event.server_id, event.gtid_seq_no), event.flags,
                   event.packet.log_pos - event.packet.event_size)
        elif isinstance(event, GtidEvent):
            # The library sets no server_id on MySQL's GTID events: the header has it; nor
            # does it read their commit times: the header's second stands in.
            yield (GTID, event.packet.log_pos, event.timestamp * 1_000_000, event.packet.server_id,
                   MysqlGtid.parse(event.gtid), None, event.packet.log_pos - event.packet.event_size)
        elif isinstance(event, TableMapEvent):
            yield TABLE_MAP, event.table_id, schema_of(event)
        elif isinstance(event, (WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent)):
            op = "u" if isinstance(event, UpdateRowsEvent) else (
                "c" if isinstance(event, WriteRowsEvent) else "d")
            yield (ROWS, event.table_id, op, None,
                   event.packet.log_pos - event.packet.event_size, event)
        elif isinstance(event, QueryEvent):
            schema = event.schema.decode("utf-8", errors="replace")
            yield (QUERY, event.packet.log_pos, event.slave_proxy_id, schema, event.query,
                   event.packet.log_pos - event.packet.event_size)
        elif isinstance(event, XAPrepareEvent):
            yield (XA_PREPARE, event.packet.log_pos, event.one_phase,
                   (event.xid_format_id, event.xid_gtrid, event.xid_bqual))
        elif isinstance(event, XidEvent):
            yield XID, event.packet.log_pos
