"""The REST server's connections: how many at once, and how long a request may take to arrive.

Each connection holds a thread, so idle or slow clients could hold them all: a request's
head and body (or the wait for the next request on a kept-alive connection) must arrive
within READ_TIMEOUT_S in all, and beyond MAX_CONNECTIONS open at once a new one is answered
503 and closed, with one log line per burst of refusals.
"""

from __future__ import annotations

import io
import json
import logging
import socket
import threading
import time
from http.server import ThreadingHTTPServer
from typing import Any

log = logging.getLogger("gtidmark.rest")

READ_TIMEOUT_S = 20.0  # a request's head and body, or the idle wait for the next request
SEND_TIMEOUT_S = 20.0  # a response written to a client that does not read
MAX_CONNECTIONS = 64  # open at once, each with its thread
BURST_GAP_S = 60.0  # refusals closer than this are one burst: one log line


class DeadlineReader(io.RawIOBase):
    """Socket reads that all end by one deadline, however the client trickles its bytes."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self._sock = sock
        self.deadline = time.monotonic() + READ_TIMEOUT_S

    def restart(self) -> None:
        """The next request (its wait, head and body) has READ_TIMEOUT_S from now."""
        self.deadline = time.monotonic() + READ_TIMEOUT_S

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"request not received within {READ_TIMEOUT_S:g}s")
        self._sock.settimeout(left)
        return self._sock.recv_into(buffer)


def _over_cap_response() -> bytes:
    body = json.dumps({"error_code": 503, "message": f"more than {MAX_CONNECTIONS} "
                       "connections open; try again later"}).encode()
    return (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s"
            % (len(body), body))


class CappedServer(ThreadingHTTPServer):
    """A thread per connection, at most MAX_CONNECTIONS of them."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: Any) -> None:
        super().__init__(address, handler)
        self._lock = threading.Lock()
        self._open = 0
        self._last_refusal = float("-inf")

    def process_request(self, request: Any, client_address: Any) -> None:
        now = time.monotonic()
        with self._lock:
            full = self._open >= MAX_CONNECTIONS
            if full:
                new_burst = now - self._last_refusal > BURST_GAP_S
                self._last_refusal = now
            else:
                self._open += 1
        if full:
            if new_burst:
                log.warning("REST: %d connections open, the most served at once: further "
                            "ones are answered 503 (logged once per burst)", MAX_CONNECTIONS)
            self._refuse(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """socketserver's, with the slot freed before the socket closes."""
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001 - handle_error logs it
            self.handle_error(request, client_address)
        finally:
            self._release()
            self.shutdown_request(request)

    def _release(self) -> None:
        with self._lock:
            self._open -= 1

    def _refuse(self, request: socket.socket) -> None:
        """503 without a thread and without waiting on the client: what fits, then close."""
        try:
            request.setblocking(False)
            request.send(_over_cap_response())
        except OSError:
            pass
        self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A broken connection is one DEBUG line, not socketserver's traceback on stderr."""
        log.debug("REST connection from %s ended abruptly", client_address)
