"""GTIDs, MariaDB positions and MySQL GTID sets: parsing, canonical text and set laws."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.flavours import MARIADB, MYSQL, flavour_named, gtid_fields
from connector.gtid import (
    GtidSet,
    MariaDbGtidPos,
    MariaGtid,
    MysqlGtid,
    parse_owned,
)

U1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
U2 = "2174b383-5441-11e8-b90a-c80aa9429562"
U3 = "024da167-0c0c-11e8-8442-00059a3c7b00"
UUIDS = (U1, U2, U3)
TAGS = ("", "dba", "etl")

# ---------------------------------------------------------------- MariaDB


def test_maria_gtid_parse_and_str() -> None:
    g = MariaGtid.parse(" 0-1-42 ")
    assert (g.domain, g.server_id, g.seq) == (0, 1, 42)
    assert str(g) == "0-1-42"
    assert MariaGtid(0, 1, 41) < g < MariaGtid(1, 0, 0)


@pytest.mark.parametrize("bad", ["", "0-1", "0-1-2-3", "a-1-2", "-1-2-3", "0-1-٣", "4294967296-1-1"])
def test_maria_gtid_rejects_malformed(bad: str) -> None:
    with pytest.raises(ValueError):
        MariaGtid.parse(bad)


def test_maria_position_contains_by_domain_seq() -> None:
    pos = MariaDbGtidPos.parse("1-3-7, 0-1-42\n")
    assert str(pos) == "0-1-42,1-3-7"
    assert pos.contains(MariaGtid(0, 1, 42)) and pos.contains(MariaGtid(0, 9, 1))
    assert pos.contains("1-3-7")
    assert not pos.contains(MariaGtid(0, 1, 43))
    assert not pos.contains(MariaGtid(2, 1, 1))  # unknown domain: nothing of it is contained
    assert pos.get(1) == MariaGtid(1, 3, 7) and pos.get(5) is None


def test_maria_position_empty() -> None:
    empty = MariaDbGtidPos.parse("  ")
    assert not empty and str(empty) == "" and len(empty) == 0
    assert not empty.contains(MariaGtid(0, 1, 1))
    assert empty.covers(empty)
    assert MariaDbGtidPos.parse("0-1-1").covers(empty)
    assert not empty.covers(MariaDbGtidPos.parse("0-1-1"))


def test_maria_position_covers() -> None:
    big = MariaDbGtidPos.parse("0-1-42,1-3-7")
    assert big.covers(MariaDbGtidPos.parse("0-2-40"))
    assert big.covers(MariaDbGtidPos.parse("0-1-42,1-3-7"))
    assert not big.covers(MariaDbGtidPos.parse("0-1-43"))
    assert not big.covers(MariaDbGtidPos.parse("0-1-1,2-1-1"))


def test_maria_position_advance_replaces_domain() -> None:
    pos = MariaDbGtidPos.parse("0-1-42")
    nxt = pos.advance(MariaGtid(1, 2, 5)).advance(MariaGtid(0, 1, 43))
    assert str(nxt) == "0-1-43,1-2-5"
    assert str(pos) == "0-1-42"  # immutable


def test_maria_position_binlog_state_keeps_last_seq_per_domain() -> None:
    assert str(MariaDbGtidPos.parse("0-1-10,0-2-15,0-3-12")) == "0-2-15"


def test_maria_position_equality_and_hash() -> None:
    a, b = MariaDbGtidPos.parse("1-1-1,0-1-2"), MariaDbGtidPos.parse("0-1-2,1-1-1")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != MariaDbGtidPos.parse("0-1-2")


def test_maria_position_refuses_mysql_values() -> None:
    pos = MariaDbGtidPos.parse("0-1-1")
    with pytest.raises(TypeError):
        pos.contains(MysqlGtid(U1, "", 1))
    with pytest.raises(TypeError):
        pos.covers(GtidSet.parse(f"{U1}:1"))  # type: ignore[arg-type]


maria_gtids = st.builds(MariaGtid, st.integers(0, 4), st.integers(0, 2**32 - 1),
                        st.integers(0, 2**64 - 1))
maria_positions = st.lists(maria_gtids, max_size=6).map(MariaDbGtidPos)


@given(maria_positions)
def test_maria_position_round_trips(pos: MariaDbGtidPos) -> None:
    assert MariaDbGtidPos.parse(str(pos)) == pos


@given(maria_positions, maria_positions, maria_gtids)
def test_maria_position_covers_means_contains(a: MariaDbGtidPos, b: MariaDbGtidPos,
                                              g: MariaGtid) -> None:
    if a.covers(b) and b.contains(g):
        assert a.contains(g)
    assert a.advance(g).contains(g)
    assert a.covers(b) == all(a.contains(x) for x in b)


# ---------------------------------------------------------------- MySQL GTIDs


def test_mysql_gtid_parse() -> None:
    assert MysqlGtid.parse(f"{U1.upper()}:5") == MysqlGtid(U1, "", 5)
    assert MysqlGtid.parse(f"{U1}:DBA:5") == MysqlGtid(U1, "dba", 5)
    assert str(MysqlGtid(U1, "dba", 5)) == f"{U1}:dba:5"
    assert MysqlGtid.parse(U1.replace("-", "") + ":3").uuid == U1


@pytest.mark.parametrize("bad", [U1, f"{U1}:0", f"{U1}:1-3", f"{U1}:tag", "xyz:1", f"{U1}:9tag:1",
                                 f"{U1}:a:b:1", f"{U1}:{2**63}"])
def test_mysql_gtid_rejects_malformed(bad: str) -> None:
    with pytest.raises(ValueError):
        MysqlGtid.parse(bad)


# ---------------------------------------------------------------- MySQL GTID sets


def test_gtid_set_parses_show_master_status_output() -> None:
    text = (f"{U2.upper()}:1-3:5,\n{U3}:1-19,\n"
            f"{U1}:1-4:Aaaa:1:abc:1-3:bbbbb:1")
    s = GtidSet.parse(text)
    assert str(s) == f"{U3}:1-19,{U2}:1-3:5,{U1}:1-4:aaaa:1:abc:1-3:bbbbb:1"
    assert s.contains(f"{U2}:5") and not s.contains(f"{U2}:4")
    assert s.contains(f"{U1}:abc:2") and not s.contains(f"{U1}:abc:4")
    assert not s.contains(f"{U1}:5") and s.contains(MysqlGtid(U1, "aaaa", 1))


def test_gtid_set_merges_intervals_and_repeated_uuids() -> None:
    s = GtidSet.parse(f"{U1}:7-9:1-5:6, {U1}:11:12-12:20-30:25-26, {U1}:tg:3")
    assert str(s) == f"{U1}:1-9:11-12:20-30:tg:3"
    assert len(s) == 9 + 2 + 11 + 1


def test_gtid_set_only_tagged() -> None:
    s = GtidSet.parse(f"{U1}:x:1-2:y:4")
    assert str(s) == f"{U1}:x:1-2:y:4"
    assert not s.contains(f"{U1}:1")


@pytest.mark.parametrize("bad", [f"{U1}", f"{U1}:", f"{U1}:tag", f"{U1}:a:b:1", f"{U1}:5-3",
                                 f"{U1}:0-3", f"{U1}:1,", f"{U1}:1,,{U2}:1", "nonsense:1",
                                 f"{U1}:1-2-3", f"{U1}:x:1:y"])
def test_gtid_set_rejects_malformed(bad: str) -> None:
    with pytest.raises(ValueError):
        GtidSet.parse(bad)


def test_gtid_set_empty() -> None:
    empty = GtidSet.parse("\n")
    assert not empty and str(empty) == "" and empty == GtidSet()
    assert GtidSet.parse(f"{U1}:1").covers(empty) and not empty.covers(GtidSet.parse(f"{U1}:1"))


def test_gtid_set_operations_examples() -> None:
    a = GtidSet.parse(f"{U1}:1-10,{U2}:1-5")
    b = GtidSet.parse(f"{U1}:3-4:8,{U3}:1")
    assert str(a.subtract(b)) == f"{U2}:1-5,{U1}:1-2:5-7:9-10"
    assert str(a.union(b)) == f"{U3}:1,{U2}:1-5,{U1}:1-10"
    assert str(a & b) == f"{U1}:3-4:8"
    assert a.issuperset(GtidSet.parse(f"{U1}:2-9")) and not a.issuperset(b)
    assert str(a.add(f"{U1}:11").add(f"{U1}:tg:1")) == f"{U2}:1-5,{U1}:1-11:tg:1"
    assert a.add(f"{U1}:3") is a


def test_gtid_set_high_watermark_as_difference() -> None:
    """Shopify's H = after - before: only what committed during the SELECT."""
    before = GtidSet.parse(f"{U1}:1-100,\n{U2}:1-7")
    after = GtidSet.parse(f"{U1}:1-103,\n{U2}:1-7")
    assert str(after - before) == f"{U1}:101-103"


def test_gtid_set_refuses_maria_values() -> None:
    with pytest.raises(TypeError):
        GtidSet().contains(MariaGtid(0, 1, 1))


def test_flavours_parse_their_own_positions_and_gtids() -> None:
    assert MARIADB.position("0-1-2") == MariaDbGtidPos.parse("0-1-2")
    assert MYSQL.position(f"{U1}:1-2") == GtidSet.parse(f"{U1}:1-2")
    assert MARIADB.gtid(gtid_fields(MariaGtid(0, 1, 2))) == MariaGtid(0, 1, 2)
    assert MYSQL.gtid(gtid_fields(MysqlGtid(U1, "etl", 2))) == MysqlGtid(U1, "etl", 2)
    with pytest.raises(ValueError):
        MARIADB.position(f"{U1}:1-2")
    with pytest.raises(ValueError):
        MYSQL.position("0-1-2")
    with pytest.raises(ValueError):
        flavour_named("postgres")


def test_gtid_set_advances_by_one_transaction() -> None:
    start = GtidSet.parse(f"{U1}:1-3")
    assert start.advance(MysqlGtid(U1, "", 4)) == GtidSet.parse(f"{U1}:1-4")
    assert start.advance(MysqlGtid(U1, "etl", 1)) == GtidSet.parse(f"{U1}:1-3:etl:1")


# Reference model: a Python set of (uuid, tag, n).
Ref = frozenset[tuple[str, str, int]]
refs = st.frozensets(st.tuples(st.sampled_from(UUIDS), st.sampled_from(TAGS),
                               st.integers(1, 40)), max_size=60)
gtid_items = st.tuples(st.sampled_from(UUIDS), st.sampled_from(TAGS), st.integers(1, 45))


def to_set(ref: Ref) -> GtidSet:
    return GtidSet.of(MysqlGtid(u, t, n) for u, t, n in ref)


def to_ref(s: GtidSet) -> Ref:
    return frozenset((g.uuid, g.tag, g.seq) for g in s)


@given(refs)
def test_gtid_set_round_trips_through_text(ref: Ref) -> None:
    s = to_set(ref)
    assert GtidSet.parse(str(s)) == s
    assert to_ref(s) == ref and len(s) == len(ref)
    assert hash(GtidSet.parse(str(s))) == hash(s)


@given(refs)
def test_gtid_set_intervals_are_merged(ref: Ref) -> None:
    for ivs in to_set(ref).intervals().values():
        assert all(s <= e for s, e in ivs)
        assert all(prev[1] + 1 < nxt[0] for prev, nxt in pairwise(ivs))


@given(refs, refs, gtid_items)
def test_gtid_set_laws_against_python_sets(a: Ref, b: Ref, item: tuple[str, str, int]) -> None:
    sa, sb = to_set(a), to_set(b)
    g = MysqlGtid(*item)
    assert sa.contains(g) == (item in a)
    assert sa.contains(str(g)) == (item in a)
    assert to_ref(sa.union(sb)) == a | b
    assert to_ref(sa.subtract(sb)) == a - b
    assert to_ref(sa & sb) == a & b
    assert sa.issuperset(sb) == (a >= b) == sa.covers(sb) == sb.issubset(sa)
    assert to_ref(sa.add(g)) == a | {item}
    assert (sa == sb) == (a == b)


# ---------------------------------------------------------------- @@gtid_owned

# What MySQL 9.7 printed with four transactions held open under `SET gtid_next` (two
# GTIDs of U1, one of U1's tag `tg`, one of a UUID starting with b): no separator between
# (uuid, tag) entries, and the owner thread id 10 runs into the UUID after it.
MEASURED_OWNED = (f"{U1}:5#11:9#10{U1}:tg:3#14"
                  "bbbbbbbb-71ca-11e1-9e33-c80aa9429562:7#12")


def test_gtid_owned_as_mysql_prints_it() -> None:
    assert parse_owned(MEASURED_OWNED) == GtidSet.parse(
        f"{U1}:5:9:tg:3,bbbbbbbb-71ca-11e1-9e33-c80aa9429562:7")
    assert parse_owned("") == GtidSet()
    assert parse_owned(f"{U2}:101#12:102#13") == GtidSet.parse(f"{U2}:101-102")


@pytest.mark.parametrize("bad", [f"{U1}:5", f"{U1}#5", f"{U1}:5#", f"{U1}:tg#3",
                                 f"{U1}:5#11,{U2}:7#12", f"{U1}:0#11", "garbage"])
def test_gtid_owned_rejects_what_mysql_does_not_print(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_owned(bad)


# Owned GTIDs: (uuid, tag, n) -> owner thread id; any UUID, some starting with a digit.
owned = st.dictionaries(st.tuples(st.uuids().map(str), st.sampled_from(TAGS),
                                  st.integers(1, 2**63 - 1)),
                        st.integers(0, 2**32 - 1), max_size=12)


def owned_text(gtids: dict[tuple[str, str, int], int]) -> str:
    """`@@gtid_owned` as Owned_gtids::to_string writes it: per (uuid, tag) the uuid, the
    tag, then `:n#owner` for each GTID, entries back to back."""
    by_tsid: dict[tuple[str, str], list[str]] = {}
    for (uuid, tag, n), owner in gtids.items():
        by_tsid.setdefault((uuid, tag), []).append(f":{n}#{owner}")
    return "".join(uuid + (f":{tag}" if tag else "") + "".join(items)
                   for (uuid, tag), items in by_tsid.items())


@given(owned)
def test_gtid_owned_parses_every_set_mysql_can_print(gtids: dict[tuple[str, str, int], int],
                                                      ) -> None:
    assert to_ref(parse_owned(owned_text(gtids))) == frozenset(gtids)
