"""A TCP proxy the test controls: `freeze()` turns every open connection half-open.

After a failover the old replica's connections neither deliver bytes nor close; a frozen
connection here does the same (sockets stay open, nothing is forwarded either way), while
new connections are forwarded as usual.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading


class TcpProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self._target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket, threading.Event]] = []
        self._closed = threading.Event()
        self._freeze_on: bytes | None = None
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self._target)
            frozen = threading.Event()
            with self._lock:
                self._pairs.append((client, server, frozen))
            threading.Thread(target=self._pump, args=(client, server, frozen),
                             daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket, frozen: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while not self._closed.is_set():
                if frozen.is_set():  # half-open: hold the sockets, move nothing
                    self._closed.wait(0.5)
                    continue
                ready, _, _ = select.select([a, b], [], [], 0.2)
                for src in ready:
                    if frozen.is_set():
                        break
                    data = src.recv(65536)
                    if not data:
                        return
                    pattern = self._freeze_on
                    if src is a and pattern is not None and pattern in data:
                        frozen.set()  # the client's request is never forwarded
                        break
                    (b if src is a else a).sendall(data)

    def accepted(self) -> int:
        """How many connections were accepted so far: a mark for `freeze(since=...)`."""
        with self._lock:
            return len(self._pairs)

    def freeze(self, since: int = 0) -> int:
        """Stop forwarding on every connection open now (those accepted after the first
        `since`); returns how many were frozen."""
        with self._lock:
            pairs = self._pairs[since:]
            for _, _, frozen in pairs:
                frozen.set()
            return len(pairs)

    def freeze_on(self, pattern: bytes | None) -> None:
        """From now on, freeze any connection whose client sends `pattern` (a query's text),
        before forwarding it; None stops that."""
        self._freeze_on = pattern

    def close(self) -> None:
        self._closed.set()
        self._listener.close()
        with self._lock:
            for a, b, _ in self._pairs:
                a.close()
                b.close()
