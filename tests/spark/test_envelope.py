"""Envelopes parsed once per schema text: the same (payload, schema) a full parse gives."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_consumer.decoding.envelope import Envelopes, NotEnvelope, parse_envelope

SCHEMA = {"type": "struct", "fields": [{"field": "payload", "type": "int64"}], "optional": False}
JSON = st.recursive(st.none() | st.booleans() | st.integers(-(1 << 63), (1 << 63) - 1)
                    | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from(["payload", "schema", "a"]), inner,
                                      max_size=3), max_leaves=8)


def compact(schema: Any, payload: Any) -> bytes:
    return orjson.dumps({"schema": schema, "payload": payload})


def spaced(schema: Any, payload: Any) -> bytes:
    return json.dumps({"schema": schema, "payload": payload}).encode()


def test_the_schema_text_is_learnt_once_for_both_layouts() -> None:
    for layout in (compact, spaced):
        envelopes = Envelopes()
        first = envelopes.split(layout(SCHEMA, {"payload": 1}))
        second = envelopes.split(layout(SCHEMA, {"payload": 2}))
        assert (first, second) == (({"payload": 1}, SCHEMA, 0), ({"payload": 2}, SCHEMA, 0))
        assert len(envelopes.prefixes) == 1


@given(st.lists(st.tuples(st.sampled_from([SCHEMA, {"type": "string"}]), JSON,
                          st.sampled_from([b"", b"x", b"}", b',"payload":1}', b" \n"])),
                max_size=12))
def test_split_gives_what_a_full_parse_gives(
        records: list[tuple[dict[str, Any], Any, bytes]]) -> None:
    envelopes = Envelopes()
    for schema, payload, tail in records:
        raw = compact(schema, payload)[:-1] + (tail if tail.strip() else b"}" + tail)
        try:
            expected: tuple[Any, ...] = parse_envelope(raw)
        except NotEnvelope:
            with pytest.raises(NotEnvelope):
                envelopes.split(raw)
            continue
        assert envelopes.split(raw)[:2] == expected


def test_no_more_schema_texts_are_kept_than_the_limit() -> None:
    envelopes = Envelopes(limit=2)
    learnt = [envelopes.split(compact({"type": "struct", "v": v}, None))[2] for v in range(4)]
    assert learnt == [0, 1, -1, -1]
