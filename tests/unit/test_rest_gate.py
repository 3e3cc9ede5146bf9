"""connector/rest/gate.py: what a request's head decides before its body is read."""

from __future__ import annotations

import base64
from email.message import Message

from hypothesis import given
from hypothesis import strategies as st

from connector.rest.gate import MAX_BODY, OPEN_PATHS, Refusal, admit
from connector.settings.parse import parse_config

BASE = {"database.hostname": "replica", "database.user": "cdc", "database.server.id": "5400",
        "topic.prefix": "shop", "bootstrap.servers": "kafka:9092", "rest.port": "8083"}
OPEN = parse_config({"name": "shop", "config": BASE})
GUARDED = parse_config({"name": "shop", "config": {
    **BASE, "rest.basic.auth.user": "operator", "rest.basic.auth.password": "pw"}})
GOOD = "Basic " + base64.b64encode(b"operator:pw").decode()

header_values = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30)
headers_lists = st.lists(st.tuples(
    st.sampled_from(["Content-Length", "Transfer-Encoding", "Authorization", "Expect", "X-Other"]),
    header_values | st.integers(-5, 3 * MAX_BODY).map(str)), max_size=6)


def message(items: list[tuple[str, str]]) -> Message:
    out = Message()
    for name, value in items:
        out[name] = value
    return out


@given(headers_lists, st.sampled_from(["/connectors", "/", "/metrics", *OPEN_PATHS]))
def test_without_credentials_nothing_but_a_401_on_guarded_paths(
        items: list[tuple[str, str]], path: str) -> None:
    """Whatever else the head says, a guarded path without the right credentials is a 401,
    and the connection closes exactly when a body may follow."""
    items = [(k, v) for k, v in items if k != "Authorization"]
    verdict = admit(path, message(items), GUARDED)
    if path in OPEN_PATHS:
        assert not (isinstance(verdict, Refusal) and verdict.response.status == 401)
        return
    assert isinstance(verdict, Refusal) and verdict.response.status == 401
    announced = any(k == "Transfer-Encoding" or (k == "Content-Length" and v.strip() not in
                                                  ("", "0")) for k, v in items)
    assert verdict.close == announced


@given(headers_lists)
def test_with_credentials_the_length_to_read_is_bounded_or_refused(
        items: list[tuple[str, str]]) -> None:
    """Never more than MAX_BODY to read; a refusal other than 401 always closes."""
    items = [(k, v) for k, v in items if k != "Authorization"] + [("Authorization", GOOD)]
    for config in (OPEN, GUARDED):
        verdict = admit("/connectors", message(items), config)
        if isinstance(verdict, Refusal):
            assert verdict.response.status in (400, 411, 413) and verdict.close
            continue
        lengths = {v.strip() for k, v in items if k == "Content-Length"}
        assert 0 <= verdict <= MAX_BODY
        assert {int(v) for v in lengths} == ({verdict} if lengths else set())
        assert all(k != "Transfer-Encoding" for k, _ in items)


def test_length_cases() -> None:
    def verdict(*items: tuple[str, str]) -> int:
        """The refusal's status, or minus the length to read."""
        got = admit("/connectors", message(list(items)), OPEN)
        return got.response.status if isinstance(got, Refusal) else -got

    assert verdict() == 0
    assert verdict(("Content-Length", "17")) == -17
    assert verdict(("Content-Length", str(MAX_BODY))) == -MAX_BODY
    assert verdict(("Content-Length", str(MAX_BODY + 1))) == 413
    assert verdict(("Content-Length", "many")) == 400
    assert verdict(("Content-Length", "²")) == 400
    assert verdict(("Content-Length", "3"), ("Content-Length", "4")) == 400
    assert verdict(("Transfer-Encoding", "chunked")) == 411
