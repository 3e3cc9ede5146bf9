"""The REST server's sockets: what a client can make it read, hold or wait for.

A real `RestServer` (the one `gtidmark run` starts) on an ephemeral port in this process,
spoken to over raw sockets; no database or broker is needed.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from connector.config import parse_config
from connector.rest.control import EngineControl
from connector.rest.server import RestServer

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
