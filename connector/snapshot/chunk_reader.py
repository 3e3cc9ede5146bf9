"""The chunk reader: chunk SELECTs, and their rows' encoding, in a process of their own.

On the engine thread, an idle-table snapshot spent 18.5% of its time in the chunk SELECT and
45% encoding the rows' keys and values (py-spy, 1M rows). Here both run in a child process,
one chunk ahead: while the engine emits chunk N, this process reads and encodes chunk N+1,
and the engine only frames and produces. A thread cannot do it: mysqlclient builds rows and
the encoders run holding the GIL (a prefetching thread measured 54-61k rows/s against
64-70k without it).

It also reads each table's chunking and largest key (table_reads.py), so that no snapshot
query of a table runs on the engine thread. Requests are answered one at a time, in order. The process starts with the first request,
and ends when the parent closes its end of the pipe (a stop, or the parent dying).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any

from connector.child import start_child, stop_child
from connector.events.envelope import EventEncoder, RowEncoding
from connector.flavours import flavour_named
from connector.logs import configure_logging
from connector.settings.model import ConnectorConfig
from connector.snapshot.session import Session, SqlError, snapshot_session
from connector.snapshot.source import ChunkRequest, ColumnsChanged, SelectedChunk, select_chunk
from connector.snapshot.sql_errors import describe, error_code
from connector.snapshot.table_reads import TableRead, TableRefused, TableRequest, read_table

log = logging.getLogger("gtidmark.snapshot")


class ChunkReadFailed(Exception):
    """A chunk could not be read. `code`: the server's error number (None: the connection or
    the process); `fatal`: not a server error at all (an encoding bug), the connector stops."""

    def __init__(self, number: int, code: int | None, reason: str, fatal: bool = False) -> None:
        super().__init__(code, reason)
        self.number = number
        self.code = code
        self.reason = reason
        self.fatal = fatal

    def __reduce__(self) -> tuple[Any, ...]:
        return ChunkReadFailed, (self.number, self.code, self.reason, self.fatal)


Request = ChunkRequest | TableRequest
Answer = SelectedChunk | ColumnsChanged | TableRead | TableRefused | ChunkReadFailed


class _Reader:
    """Child side: one session, and an encoder per table version asked for."""

    def __init__(self, config: ConnectorConfig) -> None:
        self._config = config
        self._session: Session | None = None
        self._events: EventEncoder | None = None
        self._encoders: dict[RowEncoding, Callable[[dict[str, Any]], Any]] = {}

    def read(self, request: Request) -> Answer:
        try:
            if self._session is None:
                self._session = snapshot_session(self._config)
            flavour = flavour_named(self._config.flavour)
            if isinstance(request, TableRequest):
                return read_table(self._session, request, flavour)
            return select_chunk(self._session, request, flavour,
                                self._encoder(request.encoding))
        except SqlError as exc:
            self._close()
            return ChunkReadFailed(request.number, error_code(exc), describe(exc))
        except Exception as exc:
            self._close()
            log.exception("chunk reader failed")
            return ChunkReadFailed(request.number, None, f"{type(exc).__name__}: {exc}",
                                   fatal=True)

    def _encoder(self, encoding: RowEncoding | None) -> Callable[[dict[str, Any]], Any] | None:
        if encoding is None:
            return None
        found = self._encoders.get(encoding)
        if found is None:
            if self._events is None:
                self._events = EventEncoder(self._config)
            if len(self._encoders) >= 64:  # old table versions after DDLs
                self._encoders.clear()
            found = self._encoders[encoding] = self._events.table(
                encoding.schema, encoding.key_columns or None).read_row
        return found

    def _close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            with contextlib.suppress(Exception):
                session.close()


def _child_main(fd: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    conn = Connection(fd)
    config, level = conn.recv()
    configure_logging(level)
    reader = _Reader(config)
    with contextlib.suppress(EOFError, OSError):
        while True:
            answer = reader.read(conn.recv())
            conn.send_bytes(pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
    os._exit(0)


class ChunkReader:
    """Parent side: sends requests, collects answers; `wake` is called when one arrives."""

    def __init__(self, config: ConnectorConfig, wake: Callable[[], None]) -> None:
        self._settings = (config, logging.getLogger().getEffectiveLevel())
        self._wake = wake
        self._lock = threading.Lock()
        self._answers: deque[Answer] = deque()
        self._asked: deque[int] = deque()  # numbers of requests not answered yet
        self._conn: Connection | None = None
        self._process: subprocess.Popen[bytes] | None = None

    def request(self, request: Request) -> None:
        """Ask for a chunk or a table; its answer comes after those of earlier requests."""
        if self._conn is None:
            self._start()
        assert self._conn is not None
        with self._lock:
            self._asked.append(request.number)
        try:
            self._conn.send(request)
        except OSError:
            pass  # the feeder reports the process's end for every request asked

    def has_answer(self) -> bool:
        return bool(self._answers)

    def answer(self) -> Answer | None:
        """The oldest answer not taken yet, if one has arrived."""
        with self._lock:
            return self._answers.popleft() if self._answers else None

    def close(self) -> None:
        conn, process = self._conn, self._process
        self._conn = self._process = None
        stop_child(conn, process)
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.close()

    def _start(self) -> None:
        self._conn, self._process = start_child("connector.snapshot.chunk_reader",
                                                self._settings)
        threading.Thread(target=self._feed, args=(self._conn, self._process),
                         name="chunk-reader-feeder", daemon=True).start()

    def _feed(self, conn: Connection, process: subprocess.Popen[bytes]) -> None:
        try:
            while True:
                data = conn.recv_bytes()
                answer: Answer = pickle.loads(data)
                if isinstance(answer, SelectedChunk):
                    answer = replace(answer, size=len(data))
                with self._lock:
                    if self._asked and self._asked[0] == answer.number:
                        self._asked.popleft()
                    self._answers.append(answer)
                self._wake()
        except (EOFError, OSError, TypeError):  # TypeError: close() shut the pipe mid-read
            pass
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(1)
        with self._lock:
            if self._process is process:  # ended by itself, not by close()
                self._conn = self._process = None
                with contextlib.suppress(OSError):
                    conn.close()
            reason = f"chunk reader process ended (exit code {process.poll()})"
            self._answers.extend(ChunkReadFailed(n, None, reason) for n in self._asked)
            self._asked.clear()
        self._wake()


if __name__ == "__main__":
    # Through the imported module, not this `__main__` copy: answers are pickled by class
    # name, and the parent knows `connector.snapshot.chunk_reader.ChunkReadFailed`, not
    # `__main__.ChunkReadFailed` (every failed read killed the feeder thread: the snapshot
    # then waited for ever).
    importlib.import_module("connector.snapshot.chunk_reader")._child_main(int(sys.argv[1]))
