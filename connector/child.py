"""The connector's helper processes (binlog reader, chunk reader): start and stop.

A helper is `python -m <module>` on one end of a socket pair, not a multiprocessing child:
that would re-import the parent's main module, which breaks any script that embeds the
Engine without a `__main__` guard. Its settings (with the password) are the pipe's first
message, never on the command line. It exits when the parent's end closes.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)


def start_child(module: str, settings: Any) -> tuple[Connection, subprocess.Popen[bytes]]:
    """Start `module` as a helper and send it `settings`; the parent's end of the pipe."""
    mine, theirs = socket.socketpair()
    with mine, theirs:
        process = subprocess.Popen(
            [sys.executable, "-m", module, str(theirs.fileno())],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=_child_env())
        conn = Connection(mine.detach())
    conn.send(settings)
    return conn, process


def stop_child(conn: Connection | None, process: subprocess.Popen[bytes] | None) -> None:
    """Shut the pipe down and wait for the helper (killed after 5 s); the caller closes
    `conn` once its reading thread has seen the end (not a handle closed under it)."""
    if conn is not None:
        with contextlib.suppress(OSError), socket.fromfd(
                conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    if process is not None:
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def _child_env() -> dict[str, str]:
    """This environment, with the directory holding `connector` first on the path."""
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": PACKAGE_PARENT + (os.pathsep + path if path else "")}
