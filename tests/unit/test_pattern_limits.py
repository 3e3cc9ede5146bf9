"""Signal patterns bounded before compiling (#22): compile-time bombs are refused in well under
a millisecond and never reach `regex.compile`; Debezium-style patterns still work; patterns
that pass the bound compile quickly, and their matching stays bounded in time."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.control import EngineControl
from connector.rest.routes import RestApp
from connector.settings.parse import parse_config
from signals.models import Signal, SignalRejected, parse_signal
from signals.pattern_limits import MAX_NESTING, MAX_REPEAT_PRODUCT, check_pattern
from signals.patterns import (
    MATCH_TIMEOUT_S,
    PatternTooSlow,
    collection_matches,
    compile_pattern,
)

KEY = "shop"
REFUSED = "refused before compiling"
# A parse of at most 256 characters takes under 1 ms; the bound leaves room for a loaded
# test machine's pauses. The bomb itself took minutes and 23 GB.
CHECK_BUDGET_S = 0.5

ATOMS = ["a", "[a-z]", r"\w", ".", "(?:ab|c)", r"\d", "[^.]", r"\.", "(?i:x)", r"\p{L}"]
GROUPS = ["(?:", "(", "(?>", "(?i:"]


@contextmanager
def compiles_seen() -> Iterator[list[str]]:
    """Every pattern `regex.compile` is asked for meanwhile, with a fresh pattern cache."""
    asked: list[str] = []
    real = regex.compile

    def spy(pattern: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(pattern)
        return real(pattern, *args, **kwargs)
    regex.compile = spy
    compile_pattern.cache_clear()
    try:
        yield asked
    finally:
        regex.compile = real
        compile_pattern.cache_clear()


def quantifier(draw: st.DrawFn, count: int, verbose: bool) -> str:
    """A counted repeat whose largest number is `count`, in one of its spellings."""
    low = draw(st.integers(0, count))
    forms = ["{n}", "{n,}", "{m,n}", "{,n}"] + (["{ n }", "{m , n}"] if verbose else [])
    text = draw(st.sampled_from(forms)).replace("n", str(count)).replace("m", str(low))
    return text + draw(st.sampled_from(["", "?", "+"]))  # greedy, lazy, possessive


@st.composite
def bombs(draw: st.DrawFn) -> str:
    """Counted repeats nested 1-4 deep whose counts multiply past the bound."""
    counts = draw(st.lists(st.integers(2, 99_999), min_size=1, max_size=4).filter(
        lambda c: math.prod(c) > MAX_REPEAT_PRODUCT))
    prefix = draw(st.sampled_from(["", "shop\\.", "(?V1)", "(?x)", "(?i)", "(?r)"]))
    verbose = prefix == "(?x)"
    pattern = draw(st.sampled_from(ATOMS)) + quantifier(draw, counts[0], verbose)
    for count in counts[1:]:
        pattern = f"{draw(st.sampled_from(GROUPS))}{pattern}){quantifier(draw, count, verbose)}"
    if draw(st.booleans()):
        pattern = f"(?={pattern})"
    return prefix + pattern + draw(st.sampled_from(["", "$", ".*", "_(a|b)"]))


def assert_refused_unseen(pattern: str, why: str = REFUSED) -> None:
    """Refused fast, and `regex.compile` never saw it."""
    with compiles_seen() as asked:
        started = time.perf_counter()
        with pytest.raises(ValueError, match=why):
            compile_pattern(pattern)
        assert time.perf_counter() - started < CHECK_BUDGET_S
    assert pattern not in asked


THE_ISSUES_BOMB = "(?:a{99999}){99999}"


@pytest.mark.parametrize("pattern", [r"shop\.a\R", r"\R", r"(?i)x\R+"])
def test_a_line_ending_escape_is_read_as_regex_compile_reads_it(pattern: str) -> None:
    """The line-ending escape reads the encoding regex.compile sets on its parser state
    (regex 2026.11): the bound's own parse sets it too, or a valid pattern crashed it."""
    check_pattern(pattern)
    assert compile_pattern(pattern).pattern == pattern


def test_the_issues_bomb_is_refused_without_compiling() -> None:
    """Before: regex.compile allocated 23 GB and the kernel killed the connector."""
    assert_refused_unseen(THE_ISSUES_BOMB)
    for other in ("[a-z]{4294967294}", "a{99999}", "(?x)a{9 9 9 9 9}",
                  "(?V1)(?:[[a])(]x{1000}[[a])(]){1000}", "(?:(?:a{11}){10}){10}"):
        assert_refused_unseen(other)


@settings(max_examples=300, deadline=None)
@given(bomb=bombs())
def test_generated_bombs_are_refused_fast_and_never_compiled(bomb: str) -> None:
    assert_refused_unseen(bomb)


def test_nesting_deeper_than_the_bound_is_refused() -> None:
    deep = "(" * (MAX_NESTING + 1) + "a" + ")" * (MAX_NESTING + 1)
    assert_refused_unseen(deep, f"nests groups and repeats {MAX_NESTING + 1} deep")
    assert_refused_unseen("(" * 120 + ")" * 120, "nests")
    ok = "(" * MAX_NESTING + "a" + ")" * MAX_NESTING
    assert compile_pattern(ok).fullmatch("a")


DEBEZIUM_STYLE = [
    (r"shop\.orders", "shop.orders", True), (r"shop\..*", "shop.customers", True),
    (r"shop\..*", "shopx.orders", False), (r"db[0-9]+\.t_(a|b)", "db12.t_b", True),
    (r"db[0-9]+\.t_(a|b)", "db12.t_c", False), ("shop.orders", "shop.orders", True),
    (r"inventory\.(products|orders)_\d{4}", "inventory.orders_2026", True),
    (r"app_[a-z]{2,8}\.log_\d{4}_\d{2}_\d{2}", "app_eu.log_2026_11_23", True),
    (r"(?i)SHOP\.Orders", "shop.orders", True), (r"[^.]+\.audit_.*", "x.audit_2", True),
    (r"(?:[a-z]{10}){100}", "shop.orders", False),  # at the bound: accepted
]


@pytest.mark.parametrize(("pattern", "table", "matches"), DEBEZIUM_STYLE)
def test_debezium_style_patterns_are_accepted(pattern: str, table: str, matches: bool) -> None:
    check_pattern(pattern)
    assert collection_matches(pattern, table) is matches


NAME = st.from_regex(r"[a-z_][a-z0-9_]{0,20}", fullmatch=True)
FORMS = [(r"{db}\.{table}", "{db}.{table}"), (r"{db}\..*", "{db}.{table}"),
         (r"{db}\.{table}_[0-9]+", "{db}.{table}_7"), (r"({db}|other)\.{table}.*", "other.{table}x"),
         (r"{db}[0-9]*\.{table}_(a|b)?", "{db}3.{table}_b"),
         (r"{db}\.{table}_\d{{4}}", "{db}.{table}_2026")]


@given(db=NAME, table=NAME, form=st.sampled_from(FORMS))
def test_generated_table_patterns_are_accepted(db: str, table: str,
                                               form: tuple[str, str]) -> None:
    pattern, name = (f.format(db=db, table=table) for f in form)
    check_pattern(pattern)
    assert collection_matches(pattern, name)


@st.composite
def within_bound(draw: st.DrawFn) -> str:
    """Nested counted repeats whose counts multiply to at most the bound, side by side."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        budget, pattern = MAX_REPEAT_PRODUCT, draw(st.sampled_from(ATOMS))
        for _ in range(draw(st.integers(1, 3))):
            count = draw(st.integers(1, max(1, budget)))
            budget //= count
            pattern = f"(?:{pattern}{quantifier(draw, count, False)})"
        parts.append(pattern)
    return "".join(parts)


@settings(max_examples=60, deadline=None)
@given(pattern=within_bound())
def test_patterns_within_the_bound_compile_quickly(pattern: str) -> None:
    compile_pattern.cache_clear()
    started = time.perf_counter()
    compile_pattern(pattern)
    assert time.perf_counter() - started < 1.0


BACKTRACKERS = [r"(a+)+$", r"(a|a)*$", r"(.|.)*[bc]", r"(.*){1,100}[bc]",
                r"(?:x{1,10}){1,10}!", r"(\w|\d|_|\.)*(\w|\d|_|\.)*!", r"((a*)*)*b"]


@settings(max_examples=40, deadline=None)
@given(pattern=st.sampled_from(BACKTRACKERS), db=st.integers(1, 64), table=st.integers(1, 64),
       letter=st.sampled_from("ax."))
def test_matching_against_table_names_is_bounded_in_time(pattern: str, db: int, table: int,
                                                         letter: str) -> None:
    """Names are at most 64 + 1 + 64 characters, yet `(a|a)*$` takes minutes on them: the
    match timeout, not the name's length, is what bounds it. The margin is for a loaded
    machine's scheduling (0.34 s seen with two cores busy), far under minutes."""
    name = letter * db + "." + letter * table
    started = time.perf_counter()
    try:
        collection_matches(pattern, name)
    except PatternTooSlow:
        pass
    assert time.perf_counter() - started < MATCH_TIMEOUT_S + 2.0


def bomb_signal(where: str) -> dict[str, Any]:
    data: dict[str, Any] = {"data-collections": ["shop.orders"]}
    if where == "data-collections":
        data["data-collections"] = [THE_ISSUES_BOMB]
    else:
        data["additional-conditions"] = [{"data-collection": THE_ISSUES_BOMB,
                                          "filter": "id > 1"}]
    return {"type": "execute-snapshot", "id": "bomb-1", "data": data}


@pytest.mark.parametrize("where", ["data-collections", "additional-conditions"])
def test_a_bomb_signal_is_rejected_in_one_line_naming_its_id(where: str) -> None:
    """The issue's signal, as the signal topic delivers it."""
    value = json.dumps(bomb_signal(where)).encode()
    with compiles_seen() as asked:
        started = time.perf_counter()
        with pytest.raises(SignalRejected) as rejected:
            parse_signal(KEY.encode(), value, KEY)
        assert time.perf_counter() - started < CHECK_BUDGET_S
        stop = json.dumps({"type": "stop-snapshot", "data": {"data-collections": [
            THE_ISSUES_BOMB]}}).encode()
        with pytest.raises(SignalRejected, match=REFUSED):
            parse_signal(KEY.encode(), stop, KEY)
    reason = rejected.value.reason
    assert reason.startswith("execute-snapshot (id 'bomb-1'): data.") and "\n" not in reason
    assert "9999800001" in reason and REFUSED in reason
    assert THE_ISSUES_BOMB not in asked


def test_rest_signals_answers_400_with_the_line_and_sends_nothing() -> None:
    config = parse_config({"name": "shop-connector", "config": {
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "database.hostname": "replica", "database.user": "cdc", "database.password": "pw",
        "database.server.id": "5400", "topic.prefix": KEY, "bootstrap.servers": "kafka:9092",
        "rest.port": "8083"}})
    sent: list[Signal] = []

    def send(_config: Any, signal: Signal) -> int:
        sent.append(signal)
        return 0
    app = RestApp(config, EngineControl(), send, lambda: None)
    with compiles_seen() as asked:
        reply = app.handle("POST", "/connectors/shop-connector/signals", {},
                           json.dumps(bomb_signal("data-collections")).encode())
    assert reply.status == 400 and sent == []
    message = reply.body["message"]
    assert message.startswith("signal rejected: execute-snapshot (id 'bomb-1'): ")
    assert REFUSED in message and "\n" not in message
    assert THE_ISSUES_BOMB not in asked
