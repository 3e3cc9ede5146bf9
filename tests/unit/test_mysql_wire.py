"""MySQL GTID events as a 9.7 server wrote them (bodies copied from a primary's and its
replica's binlog, checksum off): the GTID, and the original commit time Debezium's MySQL
connector puts in `source.ts_ms`/`ts_us`."""

from __future__ import annotations

import pytest

from connector.binlog.mysql_wire import tagged_gtid, untagged_gtid
from connector.gtid import MysqlGtid

UUID = "a5ec5842-e91f-11f1-982e-02fc00000001"
# GTID_LOG_EVENT of uuid:8: on the primary the immediate commit time alone (its top bit
# clear); on the replica its own immediate time, top bit set, then the primary's.
PRIMARY = ("00a5ec5842e91f11f1982e02fc000000010800000000000000020600000000000000090000000000"
           "0000b3f0e35b216106fc140150620100")
REPLICA = ("00a5ec5842e91f11f1982e02fc000000010800000000000000020600000000000000090000000000"
           "0000b7f4e35b216186b3f0e35b216106fc170150620100")
# GTID_TAGGED_LOG_EVENT of uuid:tg:1: field 6 the immediate time, field 7 (the replica's
# only) the original one.
TAGGED_PRIMARY = ("026c000000029502b103b084a5033e22c50361025c04f10300000002040406047467081"
                  "80a200c7fa708cd5b2161061049041283120b")
TAGGED_REPLICA = ("027e000000029502b103b084a5033e22c50361025c04f10300000002040406047467081"
                  "80a200c7f8765cd5b2161060e7fa708cd5b216106105d041283120b")


@pytest.mark.parametrize("body", [PRIMARY, REPLICA], ids=["primary", "replica"])
def test_an_untagged_gtid_event_gives_the_original_commit_time(body: str) -> None:
    data = bytes.fromhex(body)
    assert untagged_gtid(data, 0, len(data)) == (MysqlGtid(UUID, "", 8), 0x661215be3f0b3)


@pytest.mark.parametrize("body", [TAGGED_PRIMARY, TAGGED_REPLICA], ids=["primary", "replica"])
def test_a_tagged_gtid_event_gives_the_original_commit_time(body: str) -> None:
    data = bytes.fromhex(body)
    assert tagged_gtid(data, 0, len(data)) == (MysqlGtid(UUID, "tg", 1), 1795645762242727)


def test_a_gtid_event_without_commit_times_gives_none() -> None:
    """Before 8.0.1 the event ends after the transaction number (no logical clocks)."""
    data = bytes.fromhex(PRIMARY)[:25]
    assert untagged_gtid(data, 0, len(data)) == (MysqlGtid(UUID, "", 8), 0)
