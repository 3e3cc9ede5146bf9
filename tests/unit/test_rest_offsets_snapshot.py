"""PATCH offsets: the `snapshot` state takes no more than signals could have put there."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.offsets.rest_body import BadOffsets, parse_alter_offsets
from connector.offsets.value import SNAPSHOT_KEY
from connector.settings.filters import TableFilter
from connector.settings.parse import parse_config
from connector.snapshot.progress import TableProgress
from connector.snapshot.requests import MAX_STATE_BYTES
from connector.snapshot.state import SnapshotState
from signals.models import SignalRejected, signal_from_value
from signals.patterns import compile_pattern

BASE = {"database.hostname": "replica", "database.user": "cdc", "database.server.id": "5400",
        "topic.prefix": "shop", "bootstrap.servers": "kafka:9092"}
INCLUDE = parse_config({"name": "c", "config": {**BASE, "table.include.list": "shop.a,shop.b"}})
EXCLUDE = parse_config({"name": "c", "config": {**BASE, "table.exclude.list": "shop.secret"}})


def refusal(snapshot: Any, config: Any = INCLUDE) -> str | None:
    """Why PATCH refuses an offset with this snapshot state (as the JSON string stored)."""
    value = {"gtids": "0-1-5", SNAPSHOT_KEY: json.dumps(snapshot)}
    alter = parse_alter_offsets(json.dumps(
        {"offsets": [{"partition": {"server": "shop"}, "offset": value}]}).encode())
    try:
        alter.check(config)
    except BadOffsets as exc:
        return str(exc)
    return None


def state(*tables: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": "s1", "paused": False, "initial": False, "tables": list(tables), **extra}


def throttle_refused(data: dict[str, Any]) -> bool:
    try:
        signal_from_value({"type": "set-throttle", "data": data})
    except SignalRejected:
        return True
    return False


throttle_values = (st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70)
                   | st.floats(allow_nan=False) | st.text(max_size=6)
                   | st.sampled_from([1e9, 1.0, 100_000, 100_001, 0, 1, 60_000, 60_001, -1]))


@given(throttle_values, throttle_values)
def test_throttle_takes_what_set_throttle_takes(size: Any, delay: Any) -> None:
    """chunk_size 1e9 went through int() into the stored state; now a value is refused
    exactly when a set-throttle signal carrying it is."""
    snapshot = state({"table": "shop.a"})
    given_ = {"chunk-size": size, "chunk-delay-ms": delay}
    for key, alias in (("chunk_size", "chunk-size"), ("chunk_delay_ms", "chunk-delay-ms")):
        if given_[alias] is not None:
            snapshot[key] = given_[alias]
    data = {k: v for k, v in given_.items() if v is not None}
    assert (refusal(snapshot) is not None) == (bool(data) and throttle_refused(data))


def test_throttle_refusal_names_the_field() -> None:
    message = refusal(state({"table": "shop.a"}, chunk_size=1e9))
    assert message is not None and message.startswith("offset.snapshot_state: chunk_size 1000000000.0")
    assert "set-throttle's chunk-size" in message
    assert "less than or equal to 100000" in (refusal(state(chunk_size=100_001)) or "")
    assert refusal(state(chunk_size=100_000, chunk_delay_ms=60_000)) is None


def _pattern(text: str) -> bool:
    try:
        compile_pattern(text)
    except ValueError:
        return False
    return True


# Names that compile as patterns: a bad pattern's refusal is the signal parser's, tested there.
names = st.sampled_from(["shop.a", "shop.b", "SHOP.A", "shop.c", "mysql.global_priv",
                         "sys.x", "other.a", "shop", "shop.secret", ""]) | st.text(
                             max_size=10).filter(_pattern)


@given(st.lists(names, max_size=4, unique=True))
def test_tables_are_those_the_capture_filter_takes(tables: list[str]) -> None:
    for config in (INCLUDE, EXCLUDE):
        captured = TableFilter(config)
        expected = all("." in t and captured.captured(*t.split(".", 1)) for t in tables)
        message = refusal(state(*({"table": t} for t in tables)), config)
        if expected:
            assert message is None or "refused as a signal would be" in message, message
        else:
            assert message is not None and "is not captured" in message


@pytest.mark.parametrize("table", ["mysql.global_priv", "shop.c", "nodb"])
def test_an_uncaptured_table_is_named(table: str) -> None:
    message = refusal(state({"table": "shop.a"}, {"table": table}))
    assert message == (f"offset.snapshot_state: table \"{table}\" is not captured by this "
                       "connector (its include/exclude lists)")


def test_excluded_and_system_tables_are_refused_without_an_include_list() -> None:
    assert refusal(state({"table": "shop.a"}), EXCLUDE) is None
    assert refusal(state({"table": "shop.secret"}), EXCLUDE) is not None
    assert refusal(state({"table": "mysql.global_priv"}), EXCLUDE) is not None


def test_filters_keys_and_size_as_execute_snapshot() -> None:
    assert refusal(state({"table": "shop.a", "condition": "id > 5 AND v = 'x'",
                          "surrogate_key": "id"})) is None
    bad_filter = refusal(state({"table": "shop.a", "condition": "1=1; DROP TABLE t"}))
    assert bad_filter is not None and bad_filter.startswith(
        "offset.snapshot_state: table shop.a: refused as a signal would be: execute-snapshot")
    assert refusal(state({"table": "shop.a", "surrogate_key": "a b"})) is not None
    assert refusal(state({"table": "shop.a", "condition": 5})) is not None
    assert "listed twice" in (refusal(state({"table": "shop.a"}, {"table": "shop.a"})) or "")
    huge = state(*({"table": t, "last_key": ["x" * (MAX_STATE_BYTES // 2)]}
                   for t in ("shop.a", "shop.b")))
    assert "more than" in (refusal(huge) or "")


def test_a_state_the_connector_wrote_goes_back_unchanged() -> None:
    written = SnapshotState(id="s9", chunk_size=512, chunk_delay_ms=10, tables=[
        TableProgress(table="shop.b", condition="v <> 'gone'", last_key=(17, "k"),
                      max_key=(90, "z"), rows=17, estimate=90)])
    assert refusal(written.to_json()) is None


def test_infinity_is_a_400_not_a_crash() -> None:
    assert refusal(state({"table": "shop.a", "rows": float("inf")})) is not None
    assert refusal(state({"table": "shop.a"}, chunk_size=float("inf"))) is not None
