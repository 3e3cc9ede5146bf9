"""Real services for the tests: a private MariaDB primary + read-only replica.

Everything runs as child processes on free loopback ports under one temporary directory,
is stopped by PID at the end, and keeps its logs there for failed runs to read.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymysql

CDC_USER = "cdc"
CDC_PASSWORD = "cdc-secret-pw"
REPL_USER = "repl"
REPL_PASSWORD = "repl-pw"


class ServiceError(RuntimeError):
    """A service could not start; the message says why and where its log is."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(predicate: Any, timeout: float, what: str, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            result = predicate()
            if result:
                return result
        except Exception as exc:  # noqa: BLE001 - retried until the deadline
            last = exc
        time.sleep(interval)
    raise ServiceError(f"timed out after {timeout:.0f}s waiting for {what} (last error: {last})")


def stop_process(proc: subprocess.Popen[bytes] | None, timeout: float = 15.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    for sig in (signal.SIGCONT, signal.SIGTERM):
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            return
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


@dataclass
class ServerProcess:
    """One private database server: its own datadir, socket, port and pid file.

    Each flavour says how it installs a datadir and which command starts it; the rest
    (start and wait, stop, root connections, binlog purges) is the same.
    """

    name: str
    base: Path
    server_id: int
    replica: bool = False
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    binlog_status = "SHOW MASTER STATUS"  # where the current binlog file is

    @property
    def datadir(self) -> Path:
        return self.base / self.name / "data"

    @property
    def socket(self) -> Path:
        return self.base / self.name / "mysqld.sock"

    @property
    def log(self) -> Path:
        return self.base / self.name / "error.log"

    @property
    def installed(self) -> bool:
        raise NotImplementedError

    def install(self) -> None:
        raise NotImplementedError

    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> None:
        if not self.installed:
            self.install()
        with open(self.base / self.name / "stdout.log", "ab") as out:
            self.proc = subprocess.Popen(self.launch(), stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_for(lambda: self._ping(), 60, f"{self.name} to accept connections")
        except ServiceError as exc:
            tail = self.log.read_text(errors="replace")[-800:] if self.log.exists() else ""
            raise ServiceError(f"{exc}; log {self.log}: {tail}") from None

    def launch(self) -> list[str]:
        """The command line the server process runs with."""
        return self.command()

    def _ping(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise ServiceError(f"{self.name} exited with {self.proc.returncode}")
        self.root().close()
        return True

    def stop(self) -> None:
        stop_process(self.proc, timeout=30)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def root(self, database: str | None = None, **kwargs: Any) -> pymysql.connections.Connection:
        """A root connection over the socket (test setup only; never used by the connector)."""
        settings: dict[str, Any] = {"autocommit": True, **kwargs}
        return pymysql.connect(unix_socket=str(self.socket), user="root", password="",
                               database=database, **settings)

    def execute(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        conn = self.root()
        try:
            with conn.cursor() as cur:
                cur.execute(sql, args)
                return list(cur.fetchall())
        finally:
            conn.close()

    def purge_older_binlogs(self) -> None:
        """Start a new binlog file and purge every older one (what a retention does)."""
        self.execute("FLUSH BINARY LOGS")
        current = self.execute(self.binlog_status)[0][0]

        def purged() -> bool:
            # The server keeps a file until its binlog checkpoint is written: retry until gone.
            self.execute(f"PURGE BINARY LOGS TO '{current}'")
            return [row[0] for row in self.execute("SHOW BINARY LOGS")] == [current]

        wait_for(purged, 60, "the older binlogs to be purged", interval=0.5)


@dataclass
class MariaDb(ServerProcess):
    """One private mariadbd."""

    # Reported server version; Debezium's MySQL connector refuses MariaDB's own string.
    version: str | None = None

    @property
    def installed(self) -> bool:
        return (self.datadir / "mysql").exists()

    @property
    def tmpdir(self) -> Path:
        """Its own temporary files: servers of other sessions sharing /tmp collided there
        ("Could not remove temporary table" from mariadb-install-db)."""
        return self.base / self.name / "tmp"

    def install(self) -> None:
        self.datadir.mkdir(parents=True, exist_ok=True)
        self.tmpdir.mkdir(parents=True, exist_ok=True)
        binary = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
        if binary is None or shutil.which("mariadbd") is None and shutil.which("mysqld") is None:
            raise ServiceError("MariaDB server binaries not found (run `make setup`)")
        out = subprocess.run(
            [binary, "--no-defaults", "--user=root", f"--datadir={self.datadir}",
             "--auth-root-authentication-method=normal", "--skip-test-db",
             f"--tmpdir={self.tmpdir}"],
            capture_output=True, text=True, check=False,
        )
        if out.returncode != 0:
            raise ServiceError(f"mariadb-install-db failed for {self.name}: {out.stderr[-500:]}")

    def command(self) -> list[str]:
        server = shutil.which("mariadbd") or shutil.which("mysqld") or "mariadbd"
        args = [
            server, "--no-defaults", "--user=root", f"--datadir={self.datadir}",
            f"--socket={self.socket}", f"--port={self.port}", "--bind-address=127.0.0.1",
            f"--pid-file={self.base / self.name / 'mysqld.pid'}", f"--log-error={self.log}",
            f"--server-id={self.server_id}", f"--log-bin={self.datadir / 'binlog'}",
            "--binlog-format=ROW", "--binlog-row-image=FULL", "--binlog-row-metadata=FULL",
            "--gtid-strict-mode=ON", "--innodb-buffer-pool-size=256M",
            "--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0", "--skip-name-resolve",
            "--max-connections=500", "--innodb-log-file-size=256M", f"--tmpdir={self.tmpdir}",
        ]
        if self.replica:
            args += ["--log-slave-updates=ON", "--read-only=ON", "--skip-slave-start"]
        if self.version:
            args.append(f"--version={self.version}")
        return args

    def gtid_binlog_pos(self) -> str:
        return str(self.execute("SELECT @@global.gtid_binlog_pos")[0][0])


def create_users(primary: ServerProcess) -> None:
    """The replication user and the connector's least-privilege `cdc` user, on the primary."""
    p = primary
    p.execute(f"CREATE USER IF NOT EXISTS '{REPL_USER}'@'%' IDENTIFIED BY '{REPL_PASSWORD}'")
    p.execute(f"GRANT REPLICATION SLAVE ON *.* TO '{REPL_USER}'@'%'")
    p.execute(f"CREATE USER IF NOT EXISTS '{CDC_USER}'@'%' IDENTIFIED BY '{CDC_PASSWORD}'")
    p.execute(f"GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '{CDC_USER}'@'%'")


def cdc_settings(replica: ServerProcess) -> dict[str, Any]:
    """Connection settings for the `cdc` user on `replica`, over TCP."""
    return {"host": "127.0.0.1", "port": replica.port, "user": CDC_USER,
            "password": CDC_PASSWORD}


@dataclass
class MariaDbPair:
    """A primary and a read-only replica that follows it with GTIDs (slave_pos)."""

    primary: MariaDb
    replica: MariaDb
    flavour = "mariadb"

    @classmethod
    def create(cls, base: Path) -> MariaDbPair:
        return cls(MariaDb("primary", base, server_id=1), MariaDb("replica", base, server_id=2,
                                                                    replica=True))

    def start(self) -> None:
        self.primary.start()
        self.replica.start()
        create_users(self.primary)
        self._follow()

    def _follow(self) -> None:
        p, r = self.primary, self.replica
        r.execute("STOP SLAVE")
        r.execute(
            f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={p.port}, "
            f"MASTER_USER='{REPL_USER}', MASTER_PASSWORD='{REPL_PASSWORD}', "
            "MASTER_USE_GTID=slave_pos"
        )
        r.execute("START SLAVE")
        self.wait_synced()

    def stop(self) -> None:
        self.replica.stop()
        self.primary.stop()

    def another_replica(self, name: str, server_id: int, version: str | None = None) -> MariaDbPair:
        """Start one more read-only replica of this primary (stop it with `.replica.stop()`)."""
        pair = MariaDbPair(self.primary, MariaDb(name, self.primary.base, server_id=server_id,
                                                 replica=True, version=version))
        pair.replica.start()
        pair._follow()
        return pair

    def restart_replica(self) -> None:
        """Stop and start the replica process (its replication resumes from slave_pos)."""
        self.replica.stop()
        self.replica.start()
        self.replica.execute("START SLAVE")

    def wait_synced(self, timeout: float = 120) -> str:
        """Block until the replica has applied everything the primary has binlogged."""
        target = self.primary.gtid_binlog_pos()
        if target:
            rows = self.replica.execute("SELECT MASTER_GTID_WAIT(%s, %s)", (target, timeout))
            if rows[0][0] != 0:
                status = self.replica.execute("SHOW SLAVE STATUS")
                raise ServiceError(f"replica did not reach {target} in {timeout}s: {status}")
        return target

    def cdc_settings(self) -> dict[str, Any]:
        """Connection settings for the least-privilege CDC user on the replica."""
        return cdc_settings(self.replica)
