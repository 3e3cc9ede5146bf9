"""Table-map events parsed once per distinct body instead of once per rows event.

MariaDB writes a table-map event before every rows event. With binlog_row_metadata=FULL,
mysql-replication 1.0.17 parses its column names, types and charsets and builds the
library's Table and Column objects each time: 42% of decoding a stream of 1-3-row
transactions (py-spy, 6,000 transactions). The body (table id, names, types, metadata,
checksum excluded) stays byte-identical while the table does not change, so its parse
is kept under those bytes and later events take it over. A changed table has another
body and is parsed afresh. Streams with table or schema filters, or a frozen schema,
parse every event as the library does (their outcome depends on more than the body).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from pymysqlreplication.event import BinLogEvent
from pymysqlreplication.row_event import TableMapEvent

MAX_BODIES = 4096  # distinct table versions kept (least recently used leave first)
_FILTERS = ("only_tables", "ignored_tables", "only_schemas", "ignored_schemas",
            "freeze_schema")

_parse = TableMapEvent.__init__
_parsed: OrderedDict[tuple[bytes, Any, Any], dict[str, Any]] = OrderedDict()
_header_attributes: frozenset[str] = frozenset()


def _init(self: TableMapEvent, from_packet: Any, event_size: int, table_map: dict[int, Any],
          ctl_connection: Any, **kwargs: Any) -> None:
    if any(kwargs.get(name) for name in _FILTERS):
        _parse(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
        return
    packet = from_packet.packet
    start = packet._position  # pymysql packet: the body starts at the read position
    key = (bytes(packet._data[start:start + event_size]),
           kwargs.get("optional_meta_data"), kwargs.get("use_column_name_cache"))
    payload = _parsed.get(key)
    if payload is None:
        _parse(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
        if self._processed:
            _parsed[key] = {k: v for k, v in vars(self).items() if k not in _header_attributes}
            if len(_parsed) > MAX_BODIES:
                _parsed.popitem(last=False)
        return
    _parsed.move_to_end(key)
    BinLogEvent.__init__(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
    vars(self).update(payload)
    table_map[self.table_id] = self.table_obj


def _attributes_of_the_header() -> frozenset[str]:
    """What BinLogEvent.__init__ sets from the event's header and the stream (not the body)."""
    probe = BinLogEvent.__new__(BinLogEvent)

    class _Packet:
        event_type = timestamp = 0

    class _Connection:
        @staticmethod
        def _get_dbms() -> str:
            return "mariadb"

    BinLogEvent.__init__(probe, _Packet(), 0, {}, _Connection())
    return frozenset(vars(probe))


def install() -> None:
    """Make every TableMapEvent of this process reuse the parse of an identical body."""
    global _header_attributes
    if TableMapEvent.__init__ is not _init:
        _header_attributes = _attributes_of_the_header()
        TableMapEvent.__init__ = _init
