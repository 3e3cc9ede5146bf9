"""GTIDs and GTID positions for both flavours, as values the snapshot windows compare.

MariaDB: a GTID is `domain-server-seq`; a position keeps the last GTID per domain and, with
gtid_strict_mode, contains every GTID of that domain up to its seq.
MySQL: a GTID is `uuid[:tag]:n`; a position is a GTID *set* (`uuid:1-5:7-9:tag:1-3,uuid2:4`),
which can have gaps, so it needs real set operations.
Both offer `contains(gtid)` and `covers(other)`: the only questions a watermark asks.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, Self, TypeAlias

__all__ = [
    "Gtid", "GtidSet", "MariaDbGtidPos", "MariaGtid", "MysqlGtid", "Position", "parse_owned",
]

_U32 = 2**32 - 1
_U64 = 2**64 - 1
_MAX_TXN = 2**63 - 1  # MySQL transaction numbers are 1 .. 2^63-1
_WS = re.compile(r"\s+")
_MARIA_GTID = re.compile(r"([0-9]+)-([0-9]+)-([0-9]+)")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
                   r"|[0-9a-fA-F]{32}")
_TAG = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
_INTERVAL = re.compile(r"([0-9]+)(?:-([0-9]+))?")
_UUID36 = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# One (uuid, tag) of @@gtid_owned: `uuid[:tag]` then `:gno#owner` per owned GTID. Entries
# follow each other with no separator and an owner's digits run into a UUID that starts
# with one (`...:9#103e11fa47-...`): an owner ends where `:`, the end or a UUID follows.
_OWNED_ENTRY = re.compile(rf"({_UUID36})(?::({_TAG.pattern}))?"
                          rf"((?::[0-9]+#[0-9]+?(?=:|\Z|{_UUID36}))+)")
_OWNED_GNO = re.compile(r":([0-9]+)#")


# --------------------------------------------------------------------------- MariaDB


@dataclass(frozen=True, slots=True, order=True)
class MariaGtid:
    """One MariaDB GTID, `domain-server_id-seq`."""

    domain: int
    server_id: int
    seq: int

    @classmethod
    def parse(cls, text: str) -> MariaGtid:
        m = _MARIA_GTID.fullmatch(text.strip())
        if m is None:
            raise ValueError(f"not a MariaDB GTID (domain-server-seq): {text!r}")
        domain, server_id, seq = (int(g) for g in m.groups())
        if domain > _U32 or server_id > _U32 or seq > _U64:
            raise ValueError(f"MariaDB GTID out of range: {text!r}")
        return cls(domain, server_id, seq)

    def __str__(self) -> str:
        return f"{self.domain}-{self.server_id}-{self.seq}"


class MariaDbGtidPos:
    """A MariaDB GTID position (`@@gtid_binlog_pos` style): the last GTID of each domain."""

    __slots__ = ("_by_domain",)

    def __init__(self, gtids: Iterable[MariaGtid] = ()) -> None:
        by_domain: dict[int, MariaGtid] = {}
        for g in gtids:
            old = by_domain.get(g.domain)
            # A gtid_binlog_state lists one GTID per (domain, server): the highest seq is last.
            if old is None or g.seq >= old.seq:
                by_domain[g.domain] = g
        self._by_domain: Mapping[int, MariaGtid] = dict(sorted(by_domain.items()))

    @classmethod
    def parse(cls, text: str) -> MariaDbGtidPos:
        text = _WS.sub("", text)
        if not text:
            return cls()
        return cls(MariaGtid.parse(part) for part in text.split(","))

    def contains(self, gtid: Gtid) -> bool:
        """True if the transaction `gtid` is at or before this position (gtid_strict_mode)."""
        if isinstance(gtid, str):
            gtid = MariaGtid.parse(gtid)
        elif not isinstance(gtid, MariaGtid):
            raise TypeError(f"a MariaDB position cannot contain {type(gtid).__name__}")
        last = self._by_domain.get(gtid.domain)
        return last is not None and last.seq >= gtid.seq

    def covers(self, other: MariaDbGtidPos) -> bool:
        """True if every transaction up to `other` is also up to this position."""
        if not isinstance(other, MariaDbGtidPos):
            raise TypeError(f"cannot compare a MariaDB position with {type(other).__name__}")
        return all(self.contains(g) for g in other._by_domain.values())

    def advance(self, gtid: MariaGtid) -> MariaDbGtidPos:
        """The position after the transaction `gtid` (replaces its domain, as the server does)."""
        new = MariaDbGtidPos.__new__(MariaDbGtidPos)
        merged = dict(self._by_domain)
        known = gtid.domain in merged
        merged[gtid.domain] = gtid
        new._by_domain = merged if known else dict(sorted(merged.items()))
        return new

    def get(self, domain: int) -> MariaGtid | None:
        return self._by_domain.get(domain)

    @property
    def gtids(self) -> tuple[MariaGtid, ...]:
        """The last GTID of each domain, by domain."""
        return tuple(self._by_domain.values())

    def __iter__(self) -> Iterator[MariaGtid]:
        return iter(self._by_domain.values())

    def __len__(self) -> int:
        return len(self._by_domain)

    def __bool__(self) -> bool:
        return bool(self._by_domain)

    def __str__(self) -> str:
        return ",".join(str(g) for g in self._by_domain.values())

    def __repr__(self) -> str:
        return f"MariaDbGtidPos({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MariaDbGtidPos):
            return NotImplemented
        return self._by_domain == other._by_domain

    def __hash__(self) -> int:
        return hash(tuple(self._by_domain.values()))


# --------------------------------------------------------------------------- MySQL

Interval: TypeAlias = tuple[int, int]  # inclusive start, inclusive end
Tsid: TypeAlias = tuple[str, str]  # (uuid, tag); tag "" when untagged


def _norm_uuid(text: str) -> str:
    if _UUID.fullmatch(text) is None:
        raise ValueError(f"not a server UUID: {text!r}")
    h = text.replace("-", "").lower()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _norm_tag(text: str) -> str:
    if _TAG.fullmatch(text) is None:
        raise ValueError(f"not a GTID tag: {text!r}")
    return text.lower()


def _check_txn(n: int, text: str) -> int:
    if not 1 <= n <= _MAX_TXN:
        raise ValueError(f"GTID transaction number out of range in {text!r}")
    return n


@dataclass(frozen=True, slots=True, order=True)
class MysqlGtid:
    """One MySQL GTID, `uuid:n` or (8.3+) `uuid:tag:n`; `tag` is "" when untagged."""

    uuid: str
    tag: str
    seq: int

    @classmethod
    def parse(cls, text: str) -> MysqlGtid:
        parts = _WS.sub("", text).split(":")
        if len(parts) not in (2, 3) or not re.fullmatch("[0-9]+", parts[-1]):
            raise ValueError(f"not a MySQL GTID (uuid[:tag]:n): {text!r}")
        tag = _norm_tag(parts[1]) if len(parts) == 3 else ""
        return cls(_norm_uuid(parts[0]), tag, _check_txn(int(parts[-1]), text))

    @property
    def tsid(self) -> Tsid:
        return (self.uuid, self.tag)

    def __str__(self) -> str:
        return f"{self.uuid}:{self.tag}:{self.seq}" if self.tag else f"{self.uuid}:{self.seq}"


def _merge(intervals: Iterable[Interval]) -> tuple[Interval, ...]:
    """Sorted, disjoint, non-adjacent intervals."""
    out: list[Interval] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1] + 1:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return tuple(out)


def _subtract(mine: tuple[Interval, ...], theirs: tuple[Interval, ...]) -> tuple[Interval, ...]:
    out: list[Interval] = []
    j = 0
    for start, end in mine:
        cur = start
        while j < len(theirs) and theirs[j][1] < cur:
            j += 1
        k = j
        while k < len(theirs) and theirs[k][0] <= end:
            t_start, t_end = theirs[k]
            if t_start > cur:
                out.append((cur, t_start - 1))
            cur = max(cur, t_end + 1)
            if cur > end:
                break
            k += 1
        if cur <= end:
            out.append((cur, end))
    return tuple(out)


def _contains_interval(mine: tuple[Interval, ...], start: int, end: int) -> bool:
    i = bisect_right(mine, (start, _MAX_TXN + 1)) - 1
    return i >= 0 and mine[i][0] <= start and end <= mine[i][1]


class GtidSet:
    """A MySQL GTID set, e.g. `Executed_Gtid_Set` of SHOW MASTER STATUS. Immutable."""

    __slots__ = ("_sets",)

    def __init__(self, sets: Mapping[Tsid, Iterable[Interval]] | None = None) -> None:
        merged = {tsid: _merge(ivs) for tsid, ivs in (sets or {}).items()}
        self._sets: dict[Tsid, tuple[Interval, ...]] = {
            k: v for k, v in sorted(merged.items()) if v
        }

    @classmethod
    def _of(cls, sets: dict[Tsid, tuple[Interval, ...]]) -> GtidSet:
        """Wrap already merged intervals (internal fast path)."""
        new = cls.__new__(cls)
        new._sets = {k: v for k, v in sorted(sets.items()) if v}
        return new

    @classmethod
    def parse(cls, text: str) -> GtidSet:
        """Parse MySQL's text form; whitespace and newlines (SHOW MASTER STATUS) are ignored."""
        text = _WS.sub("", text)
        sets: dict[Tsid, list[Interval]] = {}
        if not text:
            return cls()
        for part in text.split(","):
            tokens = part.split(":")
            uuid = _norm_uuid(tokens[0])
            tag = ""
            pending_tag = True  # the uuid (or a tag) must be followed by an interval
            if len(tokens) < 2:
                raise ValueError(f"GTID set entry without intervals: {part!r}")
            for token in tokens[1:]:
                m = _INTERVAL.fullmatch(token)
                if m is None:
                    if pending_tag and tag:
                        raise ValueError(f"GTID tag without intervals in {part!r}")
                    tag = _norm_tag(token)
                    pending_tag = True
                    continue
                start = _check_txn(int(m.group(1)), part)
                end = _check_txn(int(m.group(2)), part) if m.group(2) else start
                if end < start:
                    raise ValueError(f"GTID interval {token!r} ends before it starts")
                sets.setdefault((uuid, tag), []).append((start, end))
                pending_tag = False
            if pending_tag:
                raise ValueError(f"GTID set entry without intervals: {part!r}")
        return cls(sets)

    @classmethod
    def of(cls, gtids: Iterable[MysqlGtid | str]) -> GtidSet:
        sets: dict[Tsid, list[Interval]] = {}
        for g in gtids:
            g = MysqlGtid.parse(g) if isinstance(g, str) else g
            sets.setdefault(g.tsid, []).append((g.seq, g.seq))
        return cls(sets)

    def contains(self, gtid: Gtid) -> bool:
        if isinstance(gtid, str):
            gtid = MysqlGtid.parse(gtid)
        elif not isinstance(gtid, MysqlGtid):
            raise TypeError(f"a MySQL GTID set cannot contain {type(gtid).__name__}")
        ivs = self._sets.get(gtid.tsid)
        return ivs is not None and _contains_interval(ivs, gtid.seq, gtid.seq)

    def add(self, gtid: MysqlGtid | str) -> GtidSet:
        g = MysqlGtid.parse(gtid) if isinstance(gtid, str) else gtid
        if self.contains(g):
            return self
        sets = dict(self._sets)
        sets[g.tsid] = _merge(sets.get(g.tsid, ()) + ((g.seq, g.seq),))
        return GtidSet._of(sets)

    def advance(self, gtid: MysqlGtid) -> GtidSet:
        """The position after the transaction `gtid` (the stream's step, as MariaDB's)."""
        return self.add(gtid)

    def union(self, other: GtidSet) -> GtidSet:
        sets = dict(self._sets)
        for tsid, ivs in other._sets.items():
            sets[tsid] = _merge(sets.get(tsid, ()) + ivs)
        return GtidSet._of(sets)

    def subtract(self, other: GtidSet) -> GtidSet:
        sets = {tsid: _subtract(ivs, other._sets[tsid]) if tsid in other._sets else ivs
                for tsid, ivs in self._sets.items()}
        return GtidSet._of(sets)

    def intersection(self, other: GtidSet) -> GtidSet:
        return self.subtract(self.subtract(other))

    def issuperset(self, other: GtidSet) -> bool:
        if not isinstance(other, GtidSet):
            raise TypeError(f"cannot compare a MySQL GTID set with {type(other).__name__}")
        for tsid, ivs in other._sets.items():
            mine = self._sets.get(tsid)
            if mine is None or not all(_contains_interval(mine, s, e) for s, e in ivs):
                return False
        return True

    def covers(self, other: GtidSet) -> bool:
        """Every GTID of `other` is in this set."""
        return self.issuperset(other)

    def issubset(self, other: GtidSet) -> bool:
        return other.issuperset(self)

    def intervals(self) -> Mapping[Tsid, tuple[Interval, ...]]:
        """Merged intervals per (uuid, tag), sorted."""
        return dict(self._sets)

    def __iter__(self) -> Iterator[MysqlGtid]:
        for (uuid, tag), ivs in self._sets.items():
            for start, end in ivs:
                for n in range(start, end + 1):
                    yield MysqlGtid(uuid, tag, n)

    def __len__(self) -> int:
        return sum(e - s + 1 for ivs in self._sets.values() for s, e in ivs)

    def __bool__(self) -> bool:
        return bool(self._sets)

    def __str__(self) -> str:
        entries: list[str] = []
        current = ""
        for (uuid, tag), ivs in self._sets.items():  # sorted: untagged ("") first per uuid
            text = ":".join(f"{s}" if s == e else f"{s}-{e}" for s, e in ivs)
            if uuid != current:
                entries.append(uuid)
                current = uuid
            entries[-1] += f":{tag}:{text}" if tag else f":{text}"
        return ",".join(entries)

    def __repr__(self) -> str:
        return f"GtidSet({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GtidSet):
            return NotImplemented
        return self._sets == other._sets

    def __hash__(self) -> int:
        return hash(tuple(self._sets.items()))

    __or__ = union
    __sub__ = subtract
    __and__ = intersection
    __ge__ = issuperset
    __le__ = issubset


def parse_owned(text: str) -> GtidSet:
    """The GTIDs of MySQL's `@@global.gtid_owned`, owners dropped: measured on 9.7 with
    two UUIDs and a tag in flight, `A:5#11:9#10A:tg:3#14B:7#12` (A, B server UUIDs)."""
    text = _WS.sub("", text)
    sets: dict[Tsid, list[Interval]] = {}
    at = 0
    while at < len(text):
        m = _OWNED_ENTRY.match(text, at)
        if m is None:
            raise ValueError(f"not a MySQL gtid_owned value at character {at}: {text!r}")
        tsid = (_norm_uuid(m.group(1)), _norm_tag(m.group(2)) if m.group(2) else "")
        for gno in _OWNED_GNO.findall(m.group(3)):
            n = _check_txn(int(gno), text)
            sets.setdefault(tsid, []).append((n, n))
        at = m.end()
    return GtidSet(sets)


# --------------------------------------------------------------------------- common

Gtid: TypeAlias = MariaGtid | MysqlGtid | str


class Position(Protocol):
    """What a watermark is: something that contains GTIDs and covers other positions."""

    def contains(self, gtid: Gtid) -> bool: ...

    def covers(self, other: Self) -> bool: ...

    def advance(self, gtid: Any) -> Self: ...
