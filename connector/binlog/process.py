"""The binlog reader in its own process, so decoding and encoding use both cores.

mysql-replication's decoding is pure Python and holds the GIL; with the reader a thread of
the connector, decoding and envelope encoding took turns on one core. Here `BinlogReader`
runs in a child process that sends whole transactions, pickled in batches, over a socket.
A table schema crosses the pipe once; later batches refer to it by number, so the parent
hands the encoder the same `TableSchema` object for every event of a table version.

Back-pressure is the pipe's: the child blocks on a full pipe while the parent's queue is
full. The child exits when the parent closes its end (a stop, or the parent dying).
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from connector.binlog.queue import ChangeQueue
from connector.binlog.reader import BinlogReader
from connector.binlog.resume_skip import MidTransaction
from connector.binlog.transactions import RowsChange, Transaction
from connector.child import start_child, stop_child
from connector.flavours import Flavour, flavour_named, gtid_fields
from connector.gcpolicy import tune_for_streaming
from connector.gtid import MariaGtid, MysqlGtid, Position
from connector.logs import configure_logging
from connector.schema import TableSchema

log = logging.getLogger(__name__)

STATE_POLL = 0.1  # how often the child checks for news when idle
SEND_ROWS = 2_000  # rows per message to the parent (a larger piece goes whole)
SEND_BYTES = 8 * 1024 * 1024  # binlog bytes per message: wide rows go in fewer per message


# -- messages ------------------------------------------------------------------------------
# ("schemas", [(number, TableSchema), ...])  new table versions, before their first use
# [transaction tuples, ...]                  see _Sender.send_batch / _transaction
# ("connected", bool, reconnects)         reconnects: binlog connections lost so far
# ("fail", reason)
# Transactions cross as plain tuples: pickling slotted dataclasses calls back into Python
# for every object, which cost the child (the pipeline's slowest stage) about 10%.

class _Sender:
    """Child side: batches from the reader's queue to the pipe."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._numbers: dict[int, int] = {}  # id(TableSchema) -> number
        self._keep: list[TableSchema] = []  # keeps ids stable while numbered

    def _number(self, schema: TableSchema, new: list[tuple[int, TableSchema]]) -> int:
        number = self._numbers.get(id(schema))
        if number is None:
            number = self._numbers[id(schema)] = len(self._keep)
            self._keep.append(schema)
            new.append((number, schema))
        return number

    def send_batch(self, batch: list[Transaction]) -> None:
        """In messages of about SEND_ROWS rows or SEND_BYTES bytes: the parent holds a whole
        message beside its queue, and a reader faster than the engine takes its whole queue
        as one batch (whole: +136-139 MB peak parent RSS for a 100 MB transaction, chunked:
        +89-90)."""
        chunk: list[Transaction] = []
        rows = size = 0
        for tx in batch:
            chunk.append(tx)
            rows += tx.row_count + 1
            size += tx.size
            if rows >= SEND_ROWS or size >= SEND_BYTES:
                self._send(chunk)
                chunk, rows, size = [], 0, 0
        if chunk:
            self._send(chunk)

    def _send(self, batch: list[Transaction]) -> None:
        new: list[tuple[int, TableSchema]] = []
        wire = [(gtid_fields(tx.gtid), tx.file, tx.begin_pos,
                 tx.end_pos, tx.ts_us, tx.server_id, tx.thread, tx.db, tx.ddl,
                 [(self._number(c.table, new), c.op, c.rows, c.pos) for c in tx.changes],
                 tx.gaps, tx.hold, tx.piece, tx.partial, tx.created)
                for tx in batch]
        if new:
            self._conn.send(("schemas", new))
        self._conn.send_bytes(pickle.dumps(wire, protocol=pickle.HIGHEST_PROTOCOL))


def _transaction(wire: tuple[Any, ...], schemas: dict[int, TableSchema],
                 gtid_of: Callable[[tuple[Any, ...]], MariaGtid | MysqlGtid]) -> Transaction:
    (gtid, file, begin, end, ts_us, server_id, thread, db, ddl,
     changes, gaps, hold, piece, partial, created) = wire
    # Positional, in the order of Transaction's fields: keywords cost 2.7x as much.
    return Transaction(gtid_of(gtid), file, begin, end, ts_us, server_id,
                       thread, db, ddl, [RowsChange(schemas[n], op, rows, pos)
                                         for n, op, rows, pos in changes],
                       gaps, hold, piece, partial, created)


def _child_main(fd: int) -> None:
    """Entry point of the reader process: settings arrive as the pipe's first message."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    conn = Connection(fd)
    mysql, server_id, flavour_name, start, level, (events, rows) = conn.recv()
    configure_logging(level)
    tune_for_streaming()
    stopping = threading.Event()
    threading.Thread(target=_watch_parent, args=(conn, stopping), name="parent-watch",
                     daemon=True).start()
    queue: ChangeQueue[Transaction] = ChangeQueue()
    flavour = flavour_named(flavour_name)
    reader = BinlogReader(mysql, server_id, flavour, flavour.position(start), queue,
                          resume=MidTransaction(events, rows))
    reader.start()
    sender = _Sender(conn)
    link = (False, 0)  # (connected, reconnects) as the parent last heard it
    try:
        while not stopping.is_set():
            batch = queue.take(STATE_POLL)
            # The link's state first: the reader sets it before it queues a connection's
            # first event, so the parent never has events of a link it believes down.
            if (reader.connected.is_set(), reader.reconnects) != link:
                link = (reader.connected.is_set(), reader.reconnects)
                conn.send(("connected", *link))
            if batch:
                sender.send_batch(batch)
            if queue.failure is not None and not len(queue):
                conn.send(("fail", queue.failure))
                break
    except (BrokenPipeError, EOFError, OSError):
        pass  # the parent is gone
    finally:
        reader.stop()
    os._exit(0)


def _watch_parent(conn: Connection, stopping: threading.Event) -> None:
    """After the settings the parent never writes: readable means its end closed."""
    with contextlib.suppress(Exception):
        conn.poll(None)
    stopping.set()
    os._exit(0)


class ReaderProcess:
    """Parent side: same role as a `BinlogReader` thread, fed from the child's pipe
    (the child: `python -m connector.binlog.process`, see connector/child.py)."""

    def __init__(self, mysql: dict[str, Any], server_id: int, flavour: Flavour, start: Position,
                 out: ChangeQueue[Transaction], resume: tuple[int, int] = (0, 0)) -> None:
        self._out = out
        self._gtid_of = flavour.gtid
        self._stopping = threading.Event()
        self.connected = threading.Event()
        self.disconnects = 0  # binlog connections the child lost (and reconnected)
        self._settings = (mysql, server_id, flavour.name, str(start),
                          logging.getLogger().getEffectiveLevel(), resume)
        self._conn: Connection | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._schemas: dict[int, TableSchema] = {}
        self._feeder = threading.Thread(target=self._feed, name="binlog-feeder", daemon=True)

    def start(self) -> None:
        self._conn, self._process = start_child("connector.binlog.process", self._settings)
        self._feeder.start()

    @property
    def pid(self) -> int | None:
        """The reader process's id once started (the streaming bench counts its CPU)."""
        return None if self._process is None else self._process.pid

    def stop(self) -> None:
        self._stopping.set()
        stop_child(self._conn, self._process)
        if self._feeder.is_alive():
            self._feeder.join(5)
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.close()

    def _feed(self) -> None:
        assert self._conn is not None and self._process is not None
        try:
            while not self._stopping.is_set():
                data = self._conn.recv_bytes()
                message = pickle.loads(data)
                if isinstance(message, list):
                    batch = [_transaction(wire, self._schemas, self._gtid_of)
                             for wire in message]
                    rows = sum(tx.row_count for tx in batch) + len(batch)
                    self._out.put_all(batch, rows, len(data), self._stopping)
                elif not self._handle(message):
                    return
        except (EOFError, OSError, TypeError):  # TypeError: stop() closed the pipe mid-read
            if self._stopping.is_set():
                return
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(1)
            self._out.fail(f"binlog reader process ended (exit code {self._process.poll()})")

    def _handle(self, message: tuple[Any, ...]) -> bool:
        kind = message[0]
        if kind == "schemas":
            self._schemas.update(message[1])
        elif kind == "connected":
            self.disconnects = message[2]
            if message[1]:
                self.connected.set()
            else:
                self.connected.clear()
        elif kind == "fail":
            self._out.fail(str(message[1]))
            return False
        return True


if __name__ == "__main__":
    _child_main(int(sys.argv[1]))
