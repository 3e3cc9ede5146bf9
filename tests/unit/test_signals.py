"""Signal models: every bad signal is rejected with a reason naming the problem; good ones parse."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.settings.model import MAX_CHUNK_DELAY_MS, MAX_CHUNK_SIZE
from signals.models import (
    MAX_JSON_DEPTH,
    MAX_VALUE_BYTES,
    SIGNAL_TYPES,
    ExecuteSnapshot,
    Log,
    PauseSnapshot,
    ResumeSnapshot,
    SetThrottle,
    SignalRejected,
    StopSnapshot,
    check_filter,
    parse_signal,
)
from signals.send import build_signal, parse_condition, split_tables

KEY = "dbserver1"


def _v(document: Any) -> bytes:
    return json.dumps(document).encode()


def _snap(**data: Any) -> bytes:
    return _v({"type": "execute-snapshot", "data": {"data-collections": ["app.orders"], **data}})


BAD: list[tuple[str, bytes | None, bytes | None, str]] = [
    ("missing key", None, _snap(), "missing key"),
    ("wrong key", b"other", _snap(), "key 'other' is not this connector's topic.prefix"),
    ("tombstone", KEY.encode(), None, "tombstone"),
    ("not json", KEY.encode(), b"{nope", "not JSON"),
    ("not utf8", KEY.encode(), b"\xff\xfe", "not JSON"),
    ("not an object", KEY.encode(), b"[1, 2]", "not a JSON object"),
    ("a string", KEY.encode(), b'"execute-snapshot"', "not a JSON object"),
    ("missing type", KEY.encode(), _v({"data": {}}), "missing type"),
    ("unknown type", KEY.encode(), _v({"type": "snapshot-all", "data": {}}),
     "unknown type 'snapshot-all'"),
    ("unknown top field", KEY.encode(), _v({"type": "log", "data": {"message": "x"}, "x": 1}),
     "unknown field 'x'"),
    ("no data", KEY.encode(), _v({"type": "execute-snapshot"}), "data must be a JSON object"),
    ("data a list", KEY.encode(), _v({"type": "execute-snapshot", "data": ["app.t"]}),
     "data must be a JSON object"),
    ("missing data-collections", KEY.encode(), _v({"type": "execute-snapshot", "data": {}}),
     "data.data-collections: required"),
    ("empty data-collections", KEY.encode(), _snap(**{"data-collections": []}),
     "data.data-collections"),
    ("data-collections a string", KEY.encode(), _snap(**{"data-collections": "app.t"}),
     "data.data-collections"),
    ("blank collection", KEY.encode(), _snap(**{"data-collections": [" "]}), "empty"),
    ("bad regex", KEY.encode(), _snap(**{"data-collections": ["app.(orders"]}),
     "not a valid regular expression"),
    ("bad snapshot type", KEY.encode(), _snap(type="full"), "data.type"),
    ("unknown data field", KEY.encode(), _snap(**{"data-colections": ["x"]}),
     "data.data-colections: unknown field"),
    ("id inside data", KEY.encode(), _snap(id="1"), "data.id: unknown field"),
    ("filter with semicolon", KEY.encode(),
     _snap(**{"additional-conditions": [{"data-collection": "app.orders",
                                         "filter": "id < 3; DROP TABLE app.orders"}]}),
     "additional-conditions[0].filter: character ';' at position 6 is not allowed"),
    ("filter is a statement", KEY.encode(),
     _snap(**{"additional-conditions": [{"data-collection": "app.orders",
                                         "filter": "DELETE FROM app.orders"}]}),
     "character '.'"),
    ("filter is truncate table", KEY.encode(),
     _snap(**{"additional-condition": "truncate table orders"}), "expected a comparison"),
    ("filter with comment", KEY.encode(), _snap(**{"additional-condition": "1=1 -- x"}),
     "unexpected '-'"),
    ("filter closes paren", KEY.encode(), _snap(**{"additional-condition": "id < 3) OR (1=1"}),
     "unexpected ')'"),
    ("filter open quote", KEY.encode(), _snap(**{"additional-condition": "name = 'x"}),
     "unterminated string literal"),
    ("empty filter", KEY.encode(), _snap(**{"additional-condition": "WHERE  "}),
     "additional-condition"),
    ("filter not a string", KEY.encode(), _snap(**{"additional-condition": 5}),
     "additional-condition must be a string"),
    ("condition for another table", KEY.encode(),
     _snap(**{"additional-conditions": [{"data-collection": "app.items", "filter": "id < 3"}]}),
     "'app.items' is not among data-collections"),
    ("condition without filter", KEY.encode(),
     _snap(**{"additional-conditions": [{"data-collection": "app.orders"}]}),
     "additional-conditions[0].filter: required"),
    ("both condition forms", KEY.encode(),
     _snap(**{"additional-condition": "id < 3", "additional-conditions": []}), "not both"),
    ("surrogate key is sql", KEY.encode(), _snap(**{"surrogate-key": "id; drop"}),
     "not a column name"),
    ("stop with bad type", KEY.encode(), _v({"type": "stop-snapshot", "data": {"type": "x"}}),
     "data.type"),
    ("log without message", KEY.encode(), _v({"type": "log", "data": {}}),
     "data.message: required"),
    ("log empty message", KEY.encode(), _v({"type": "log", "data": {"message": ""}}),
     "data.message"),
    ("throttle nothing", KEY.encode(), _v({"type": "set-throttle", "data": {}}),
     "give chunk-size and/or chunk-delay-ms"),
    ("throttle zero size", KEY.encode(), _v({"type": "set-throttle", "data": {"chunk-size": 0}}),
     "data.chunk-size: Input should be greater than 0"),
    ("throttle negative size", KEY.encode(),
     _v({"type": "set-throttle", "data": {"chunk-size": -5}}), "data.chunk-size"),
    ("throttle string size", KEY.encode(),
     _v({"type": "set-throttle", "data": {"chunk-size": "100"}}), "data.chunk-size"),
    ("throttle bool size", KEY.encode(),
     _v({"type": "set-throttle", "data": {"chunk-size": True}}), "data.chunk-size"),
    ("throttle float size", KEY.encode(),
     _v({"type": "set-throttle", "data": {"chunk-size": 1.5}}), "data.chunk-size"),
    ("throttle negative delay", KEY.encode(),
     _v({"type": "set-throttle", "data": {"chunk-delay-ms": -1}}),
     "data.chunk-delay-ms: Input should be greater than or equal to 0"),
    ("id of wrong type", KEY.encode(), _v({"type": "pause-snapshot", "id": [1]}),
     "id must be a string"),
]


@pytest.mark.parametrize(("key", "value", "reason"), [b[1:] for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_signal_is_rejected_with_reason(key: bytes | None, value: bytes | None,
                                            reason: str) -> None:
    with pytest.raises(SignalRejected) as err:
        parse_signal(key, value, KEY)
    assert reason in err.value.reason
    assert "\n" not in err.value.reason


# Debezium's documented examples (Kafka signal channel, signaling docs) and Shopify's post.
DEBEZIUM_EXAMPLES: list[tuple[str, str, Any]] = [
    ("docs execute-snapshot",
     ('{"type":"execute-snapshot","data": {"data-collections": ["schema1.table1", '
     '"schema1.table2"], "type": "INCREMENTAL"}}'),
     ExecuteSnapshot(**{"data-collections": ["schema1.table1", "schema1.table2"]})),
    ("docs additional-conditions",
     ('{"type":"execute-snapshot","data": {"data-collections": ["schema1.products"], '
     '"type": "INCREMENTAL", "additional-conditions":[{"data-collection": "schema1.products" '
     ',"filter":"color=\'blue\'"}]}}'),
     ExecuteSnapshot(**{"data-collections": ["schema1.products"], "additional-conditions": [
         {"data-collection": "schema1.products", "filter": "color='blue'"}]})),
    ("shopify post",
     ('{"type":"execute-snapshot","data": {"data-collections": ["inventory.orders"], '
     '"type": "INCREMENTAL"}}'),
     ExecuteSnapshot(**{"data-collections": ["inventory.orders"]})),
    ("docs stop-snapshot",
     ('{"type":"stop-snapshot","data": {"data-collections": ["schema1.table1", '
     '"schema1.table2"], "type": "INCREMENTAL"}}'),
     StopSnapshot(**{"data-collections": ["schema1.table1", "schema1.table2"]})),
    ("docs pause-snapshot", '{"type":"pause-snapshot","data": {"type": "INCREMENTAL"}}',
     PauseSnapshot(type="incremental")),
    ("docs resume-snapshot", '{"type":"resume-snapshot","data": {"type": "INCREMENTAL"}}',
     ResumeSnapshot(type="incremental")),
    ("docs log", '{"type":"log","data":{"message": "Signal message at offset {}"}}',
     Log(message="Signal message at offset {}")),
    ("docs blocking", ('{"type":"execute-snapshot","data": {"data-collections": ["s.t"], '
     '"type": "BLOCKING"}}'),
     ExecuteSnapshot(**{"data-collections": ["s.t"], "type": "blocking"})),
]

GOOD: list[tuple[str, bytes, Any]] = [
    (name, text.encode(), expected) for name, text, expected in DEBEZIUM_EXAMPLES
] + [
    ("older additional-condition",
     _snap(**{"data-collections": ["app.orders", "app.items"],
              "additional-condition": "WHERE id < 10"}),
     ExecuteSnapshot(**{"data-collections": ["app.orders", "app.items"],
                        "additional-conditions": [
                            {"data-collection": "app.orders", "filter": "id < 10"},
                            {"data-collection": "app.items", "filter": "id < 10"}]})),
    ("regex collection and surrogate key",
     _snap(**{"data-collections": ["app\\.order.*"], "surrogate-key": "order_no",
              "additional-conditions": [{"data-collection": "app.orders", "filter": "id=1"}]}),
     ExecuteSnapshot(**{"data-collections": ["app\\.order.*"], "surrogate-key": "order_no",
                        "additional-conditions": [
                            {"data-collection": "app.orders", "filter": "id=1"}]})),
    ("stop all", _v({"type": "stop-snapshot"}), StopSnapshot()),
    ("pause without data", _v({"type": "pause-snapshot", "data": None}), PauseSnapshot()),
    ("resume with empty data", _v({"type": "resume-snapshot", "data": {}}), ResumeSnapshot()),
    ("set-throttle both", _v({"type": "set-throttle",
                              "data": {"chunk-size": 50, "chunk-delay-ms": 0}}),
     SetThrottle(**{"chunk-size": 50, "chunk-delay-ms": 0})),
    ("set-throttle delay only", _v({"type": "set-throttle", "data": {"chunk-delay-ms": 250}}),
     SetThrottle(**{"chunk-delay-ms": 250})),
    ("signal-table data string", _v({"type": "log", "data": '{"message": "hi"}', "id": "a-1"}),
     Log(message="hi", id="a-1")),
    ("numeric id", _v({"type": "pause-snapshot", "id": 42}), PauseSnapshot(id="42")),
    ("type in upper case", _v({"type": "LOG", "data": {"message": "m"}}), Log(message="m")),
]


@pytest.mark.parametrize(("value", "expected"), [g[1:] for g in GOOD], ids=[g[0] for g in GOOD])
def test_good_signal_parses(value: bytes, expected: Any) -> None:
    assert parse_signal(KEY.encode(), value, KEY) == expected


def test_json_string_key_is_accepted() -> None:
    assert parse_signal(b'"dbserver1"', b'{"type":"pause-snapshot"}', KEY) == PauseSnapshot()


@pytest.mark.parametrize("fragment", [
    "color='blue'", "start > '2024-01-01'", "name = 'a;b -- c'",
    "id IN (1, 2, 3)", "(a = 1) AND (b = 'it''s')", "`desc` IS NULL", "note = 'x # y'",
])
def test_where_fragments_that_are_accepted(fragment: str) -> None:
    assert check_filter(fragment) == fragment


def test_leading_where_is_dropped() -> None:
    assert check_filter("  where id < 5") == "id < 5"


def test_blocking_type_is_kept_for_the_connector_to_refuse() -> None:
    signal = parse_signal(KEY.encode(), _snap(type="blocking"), KEY)
    assert isinstance(signal, ExecuteSnapshot) and signal.snapshot_type == "blocking"


def test_condition_for_matches_exact_and_regex_and_ands_several() -> None:
    signal = ExecuteSnapshot(**{
        "data-collections": ["app\\..*"],
        "additional-conditions": [{"data-collection": "app.orders", "filter": "id < 10"},
                                  {"data-collection": "app\\.ord.*", "filter": "v > 0"}]})
    assert signal.condition_for("app.orders") == "(id < 10) AND (v > 0)"
    assert signal.condition_for("app.items") is None


def test_to_value_is_debeziums_shape() -> None:
    signal = ExecuteSnapshot(id="x1", **{"data-collections": ["app.orders"],
                                         "additional-conditions": [
                                             {"data-collection": "app.orders",
                                              "filter": "id < 3"}]})
    assert signal.to_value() == {
        "type": "execute-snapshot", "id": "x1",
        "data": {"data-collections": ["app.orders"], "type": "incremental",
                 "additional-conditions": [{"data-collection": "app.orders",
                                            "filter": "id < 3"}]}}


def test_build_signal_execute_snapshot_with_conditions() -> None:
    signal = build_signal("execute-snapshot", tables=split_tables("app.orders, app.items"),
                          conditions=["app.orders=status = 'new'"], surrogate_key="sk",
                          signal_id="s1")
    assert signal.to_value() == {
        "type": "execute-snapshot", "id": "s1",
        "data": {"data-collections": ["app.orders", "app.items"], "type": "incremental",
                 "additional-conditions": [{"data-collection": "app.orders",
                                            "filter": "status = 'new'"}],
                 "surrogate-key": "sk"}}


@pytest.mark.parametrize(("action", "kwargs", "reason"), [
    ("execute-snapshot", {"tables": []}, "data-collections"),
    ("execute-snapshot", {"tables": ["app.t"], "conditions": ["no equals sign"]},
     "expected TABLE=FILTER"),
    ("execute-snapshot", {"tables": ["app.t"], "conditions": ["app.u=id < 2"]},
     "not among data-collections"),
    ("set-throttle", {}, "give chunk-size and/or chunk-delay-ms"),
    ("set-throttle", {"chunk_size": 0}, "chunk-size"),
    ("log", {"message": ""}, "data.message"),
    ("reboot", {}, "unknown signal action"),
])
def test_build_signal_rejects_bad_arguments(action: str, kwargs: dict[str, Any],
                                            reason: str) -> None:
    with pytest.raises(SignalRejected) as err:
        build_signal(action, **kwargs)
    assert reason in err.value.reason


def test_parse_condition_splits_at_first_equals() -> None:
    assert parse_condition("app.t=a = 'x=y'") == {"data-collection": "app.t",
                                                  "filter": "a = 'x=y'"}


_ident = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
_table = st.builds(lambda d, t: f"{d}.{t}", _ident, _ident)


@given(tables=st.lists(_table, min_size=1, max_size=4, unique=True),
       bound=st.integers(min_value=-10**9, max_value=10**9),
       text=st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                           blacklist_characters="'\\"), max_size=20),
       signal_id=st.uuids())
def test_execute_snapshot_round_trips_through_json(tables: list[str], bound: int, text: str,
                                                   signal_id: object) -> None:
    where = f"id < {bound} AND name <> '{text}'"
    signal = build_signal("execute-snapshot", tables=tables,
                          conditions=[f"{tables[0]}={where}"], signal_id=str(signal_id))
    assert parse_signal(KEY.encode(), signal.to_json(), KEY) == signal


@given(before=st.text(alphabet="abc =<>()0123456789", max_size=15),
       after=st.text(alphabet="abc =<>0123456789", max_size=15))
def test_semicolon_outside_quotes_is_always_rejected(before: str, after: str) -> None:
    with pytest.raises(ValueError):
        check_filter(f"x{before};{after}")


def test_deeply_nested_json_is_rejected_not_raised() -> None:
    """json.loads raises RecursionError past ~1000 levels: the signal was replayed forever."""
    for depth in (MAX_JSON_DEPTH + 1, 30_000):
        value = b'{"type": "log", "data": {"message": "x", "n": ' + b"[" * depth + \
            b"]" * depth + b"}}"
        with pytest.raises(SignalRejected, match="nested deeper than"):
            parse_signal(KEY.encode(), value, KEY)


def test_oversize_value_and_id_are_rejected() -> None:
    big = _v({"type": "log", "data": {"message": "x" * (MAX_VALUE_BYTES + 1)}})
    with pytest.raises(SignalRejected, match="bytes, more than"):
        parse_signal(KEY.encode(), big, KEY)
    long_id = _v({"type": "pause-snapshot", "id": "i" * 129})
    with pytest.raises(SignalRejected, match="id"):
        parse_signal(KEY.encode(), long_id, KEY)


@pytest.mark.parametrize(("data", "ok"), [
    ({"chunk-size": MAX_CHUNK_SIZE}, True), ({"chunk-size": MAX_CHUNK_SIZE + 1}, False),
    ({"chunk-size": 1_000_000}, False), ({"chunk-delay-ms": MAX_CHUNK_DELAY_MS}, True),
    ({"chunk-delay-ms": MAX_CHUNK_DELAY_MS + 1}, False),
])
def test_set_throttle_is_bounded_like_the_config(data: dict[str, int], ok: bool) -> None:
    value = _v({"type": "set-throttle", "data": data})
    if ok:
        assert isinstance(parse_signal(KEY.encode(), value, KEY), SetThrottle)
    else:
        with pytest.raises(SignalRejected, match="less than or equal"):
            parse_signal(KEY.encode(), value, KEY)


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
                     lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=20), inner, max_size=4), max_leaves=30)
_keys = st.sampled_from(["type", "data", "id", "data-collections", "additional-conditions",
                         "filter", "data-collection", "surrogate-key", "chunk-size", "message"])


@given(st.one_of(
    st.binary(max_size=200),
    _json.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"type": st.sampled_from(list(SIGNAL_TYPES) + ["x"]),
                           "data": st.dictionaries(_keys, _json, max_size=4)})
    .map(lambda v: json.dumps(v).encode()),
))
def test_any_value_is_a_signal_or_one_rejection(value: bytes) -> None:
    try:
        parse_signal(KEY.encode(), value, KEY)
    except SignalRejected as exc:
        assert exc.reason and "\n" not in exc.reason


def test_where_inside_a_filter_is_kept() -> None:
    """Only a leading WHERE keyword is dropped, never one inside a string or later on."""
    assert check_filter("s = 'a WHERE b'") == "s = 'a WHERE b'"
    assert check_filter("WHERE s = 'where'") == "s = 'where'"
