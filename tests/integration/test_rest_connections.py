"""The REST server's sockets: what a client can make it read, hold or wait for.

A real `RestServer` (the one `gtidmark run` starts) on an ephemeral port in this process,
spoken to over raw sockets; no database or broker is needed.
"""

from __future__ import annotations

import base64
import http.client
import json
import logging
import select
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from connector.control import EngineControl
from connector.rest import connections
from connector.rest.server import RestServer
from connector.settings.parse import parse_config

NAME = "conn-test"
AUTH = ("operator", "pw-rest")


def token(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@contextmanager
def serving(**settings: str) -> Iterator[RestServer]:
    config = parse_config({"name": NAME, "config": {
        "database.hostname": "127.0.0.1", "database.user": "cdc", "database.server.id": "7",
        "topic.prefix": "conn", "bootstrap.servers": "127.0.0.1:1", "rest.port": "0",
        **settings}})
    server = RestServer(config, EngineControl())
    server.start()
    try:
        yield server
    finally:
        server.stop()


def with_auth() -> dict[str, str]:
    return {"rest.basic.auth.user": AUTH[0], "rest.basic.auth.password": AUTH[1]}


def read_response(sock: socket.socket) -> tuple[bytes, Any]:
    """One response: its head, and its body decoded as JSON (None when empty)."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before a response: {received!r}"
        received += chunk
    head, _, rest = received.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk, "connection closed mid-body"
        rest += chunk
    return head, json.loads(rest[:length]) if length else None


def closed_by_server(sock: socket.socket) -> bool:
    """The server closed its end (EOF, or a reset because bytes were left unread)."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_credentials_are_checked_before_the_body_is_read() -> None:
    """A client without credentials announcing 1 MiB is answered 401 at once, the body never
    read (the server does not wait for it), and the connection closes; with
    `Expect: 100-continue` it gets the 401 instead of the go-ahead."""
    with serving(**with_auth()) as server:
        for expect in (b"", b"Expect: 100-continue\r\n"):
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
                sock.sendall(b"POST /connectors/%s/signals HTTP/1.1\r\nHost: x\r\n"
                             b"Content-Type: application/json\r\n"
                             b"Content-Length: 1048576\r\n%s\r\n" % (NAME.encode(), expect))
                head, body = read_response(sock)  # before the fix: timed out here
                assert head.startswith(b"HTTP/1.1 401"), head
                assert b"\r\nconnection: close" in head.lower()
                assert body == {"error_code": 401, "message": "User cannot access the resource."}
                assert closed_by_server(sock)


def test_body_framing_and_size_are_refused_from_the_head() -> None:
    """Authenticated: over 1 MiB is 413 and a chunked body 411, neither read; a bad
    Content-Length is 400. Each closes the connection (the body would follow)."""
    auth = token(*AUTH).encode()
    cases = [(b"Content-Length: 1048577\r\n", 413), (b"Transfer-Encoding: chunked\r\n", 411),
             (b"Content-Length: -5\r\n", 400), (b"Content-Length: 3\r\nContent-Length: 4\r\n",
                                                400)]
    with serving(**with_auth()) as server:
        for framing, status in cases:
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
                sock.sendall(b"POST /connectors/%s/signals HTTP/1.1\r\nHost: x\r\n"
                             b"Authorization: %s\r\n%s\r\n" % (NAME.encode(), auth, framing))
                head, body = read_response(sock)
                assert head.startswith(b"HTTP/1.1 %d" % status), (framing, head)
                assert body["error_code"] == status
                assert closed_by_server(sock)


def test_keep_alive_carries_requests_with_bodies() -> None:
    """Within the rules a connection stays open: a refused body (no credentials, no body
    sent) keeps it, a body read keeps it, and the next request on it is answered."""
    with serving(**with_auth()) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        try:
            conn.request("GET", "/connectors")
            refused = conn.getresponse()
            assert refused.status == 401 and refused.getheader("Connection") is None
            refused.read()
            conn.request("PUT", "/connectors/other/pause", body=b'{"x": 1}',
                         headers={"Authorization": token(*AUTH)})
            unknown = conn.getresponse()
            assert unknown.status == 404 and json.loads(unknown.read())["error_code"] == 404
            conn.request("GET", "/connectors", headers={"Authorization": token(*AUTH)})
            listed = conn.getresponse()
            assert listed.status == 200 and json.loads(listed.read()) == [NAME]
        finally:
            conn.close()


def opened(server: RestServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def answered(server: RestServer) -> tuple[bytes, Any]:
    """GET /connectors on a new connection, read to the server's close."""
    with opened(server) as sock:
        sock.sendall(b"GET /connectors HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        reply = read_response(sock)
        assert closed_by_server(sock)
        return reply


def test_idle_connections_are_capped_and_closed_in_time(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Idle sockets below the cap leave room for real requests; at the cap new connections
    get a 503 (one log line for the burst); the idle ones are closed once the read timeout
    has passed, and the slots they held serve again."""
    monkeypatch.setattr(connections, "MAX_CONNECTIONS", 4)
    monkeypatch.setattr(connections, "READ_TIMEOUT_S", 2.0)
    with serving() as server:
        started = time.monotonic()
        idle = [opened(server) for _ in range(3)]
        head, body = answered(server)
        assert head.startswith(b"HTTP/1.1 200") and body == [NAME]
        idle.append(opened(server))  # the fourth: at the cap
        with caplog.at_level(logging.WARNING, logger="gtidmark.rest"):
            for _ in range(5):
                head, body = answered(server)  # before the fix: 200s
                assert head.startswith(b"HTTP/1.1 503"), head
                assert body["error_code"] == 503
        burst = [r for r in caplog.records if "connections open" in r.getMessage()]
        assert len(burst) == 1, [r.getMessage() for r in caplog.records]
        for sock in idle:
            assert closed_by_server(sock)  # before the fix: still open when recv timed out
            sock.close()
        waited = time.monotonic() - started
        assert connections.READ_TIMEOUT_S - 0.2 <= waited < connections.READ_TIMEOUT_S + 3
        head, body = answered(server)
        assert head.startswith(b"HTTP/1.1 200") and body == [NAME]


def test_a_trickled_request_head_is_cut_at_the_read_timeout(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A client sending a header line every 0.2 s never completes its head; the timeout is
    for the whole head, not per read, so the connection is closed all the same."""
    monkeypatch.setattr(connections, "READ_TIMEOUT_S", 1.5)
    with serving() as server, opened(server) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /connectors HTTP/1.1\r\nHost: x\r\n")
        closed = False
        while not closed and time.monotonic() - started < connections.READ_TIMEOUT_S + 5:
            try:
                sock.sendall(b"X-Pad: 1\r\n")
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            readable, _, _ = select.select([sock], [], [], 0.2)  # paces the trickle too
            closed = bool(readable) and closed_by_server(sock)
        waited = time.monotonic() - started
        assert closed, "the trickling client was never cut off"
        assert waited < connections.READ_TIMEOUT_S + 1.5
