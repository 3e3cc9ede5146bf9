"""snapshot.mode=when_needed: offsets the replica can no longer stream from are dropped, and
the start is a first start's (a snapshot); under initial they are kept (the stream fails)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from connector import start_position
from connector.binlog.reader import PURGED
from connector.flavours import MARIADB, MYSQL, Flavour
from connector.offsets.value import ConnectorOffsets
from connector.start_position import purged_under_when_needed, usable_offsets
from tests.unit.test_config import cfg

UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


class Replica:
    """What `_read` answers in place of a replica session: its oldest position and files."""

    def __init__(self, oldest: str, files: tuple[str, ...] = ("bin.000007",)) -> None:
        self.oldest, self.files, self.reads = oldest, files, 0

    def read(self, _config: Any, read: Callable[[Any], Any]) -> Any:
        self.reads += 1
        if read.__name__ == "_binlog_files":
            return list(self.files)
        return getattr(read, "__self__", MARIADB).position(self.oldest)


@pytest.fixture
def replica(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Replica]:
    def make(oldest: str, files: tuple[str, ...] = ("bin.000007",)) -> Replica:
        fake = Replica(oldest, files)
        monkeypatch.setattr(start_position, "_read", fake.read)
        return fake
    return make


@pytest.mark.parametrize(("flavour", "gtids", "oldest", "usable"), [
    (MARIADB, "0-1-5", "0-1-9", False),  # the oldest binlog starts after the offsets
    (MARIADB, "0-1-9", "0-1-9", True),  # at the oldest binlog's start: servable
    (MARIADB, "0-1-12", "0-1-9", True),
    (MARIADB, "0-1-12", "0-1-9,1-2-3", False),  # a domain the offsets never saw is purged
    (MARIADB, "0-1-12", "", True),  # nothing purged
    (MYSQL, f"{UUID}:1-7", f"{UUID}:1-10", False),  # gtid_purged not within the offsets
    (MYSQL, f"{UUID}:1-12", f"{UUID}:1-10", True),
    (MYSQL, f"{UUID}:1-12", "", True),
])
def test_when_needed_drops_offsets_whose_binlog_is_purged(
        replica: Callable[..., Replica], flavour: Flavour, gtids: str, oldest: str,
        usable: bool, caplog: pytest.LogCaptureFixture) -> None:
    replica(oldest)
    stored = ConnectorOffsets(gtids=gtids)
    with caplog.at_level(logging.WARNING, logger="gtidmark"):
        kept = usable_offsets(cfg(snapshot__mode="when_needed"), flavour, stored)
    assert kept is (stored if usable else None)
    assert [r.getMessage() for r in caplog.records] == ([] if usable else [(
        "snapshot.mode=when_needed: the replica no longer has the binlog for the committed "
        f"offsets' GTID {flavour.position(gtids)} (purged); a new snapshot of every captured "
        "table starts, streaming from the replica's current position")])


def test_offsets_without_gtids_are_dropped_when_their_binlog_file_is_gone(
        replica: Callable[..., Replica], caplog: pytest.LogCaptureFixture) -> None:
    """Debezium's file/pos offsets: the file no longer listed by SHOW BINARY LOGS."""
    replica("", files=("bin.000007", "bin.000008"))
    config = cfg(snapshot__mode="when_needed")
    here = ConnectorOffsets(gtids="", file="bin.000007", pos=400)
    assert usable_offsets(config, MARIADB, here) is here
    with caplog.at_level(logging.WARNING, logger="gtidmark"):
        assert usable_offsets(config, MARIADB, ConnectorOffsets(
            gtids="", file="bin.000003", pos=400)) is None
    assert "committed offsets' binlog bin.000003:400 (purged)" in caplog.records[0].getMessage()


@pytest.mark.parametrize("mode", ["initial", "always", "no_data", "never"])
def test_other_modes_keep_the_offsets_without_asking_the_replica(
        replica: Callable[..., Replica], mode: str) -> None:
    fake = replica("0-1-9")
    stored = ConnectorOffsets(gtids="0-1-5")
    assert usable_offsets(cfg(snapshot__mode=mode), MARIADB, stored) is stored
    assert usable_offsets(cfg(snapshot__mode="when_needed"), MARIADB, None) is None
    assert fake.reads == 0


FAILURE = f"{PURGED} 0-1-5, re-snapshot with fresh offsets (server: purged)"


@pytest.mark.parametrize(("mode", "failure", "oldest", "again"), [
    ("when_needed", FAILURE, "0-1-9", True),
    ("when_needed", FAILURE, "0-1-5", False),  # the replica can serve it: not a purge
    ("when_needed", "binlog reader failed: boom", "0-1-9", False),
    ("initial", FAILURE, "0-1-9", False),
])
def test_a_purge_mid_stream_starts_again_only_under_when_needed(
        replica: Callable[..., Replica], mode: str, failure: str, oldest: str,
        again: bool) -> None:
    replica(oldest)
    assert purged_under_when_needed(cfg(snapshot__mode=mode), MARIADB,
                                    MARIADB.position("0-1-5"), failure) is again
