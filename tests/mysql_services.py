"""A private MySQL 9 primary + read-only, multi-threaded replica, as tests/services.py's MariaDB.

MySQL 9 needs glibc 2.38+, newer than this Debian's: `make setup` (scripts/mysql-root) puts
it in a Debian sid root outside the project, and mysqld runs from there through the root's
own dynamic loader, without chroot, on this machine's paths.

Accounts use MySQL 9's default caching_sha2_password. A client's first login after a server
start (or FLUSH PRIVILEGES) is a full authentication: over TLS the password goes as is, over
plain TCP it is RSA-encrypted with the server's public key, which the client fetches itself;
`--initialize` generates both the TLS certificates and the RSA keys in the datadir. With the
connector's default `database.ssl.mode=preferred`, pymysql 1.2+ (and mysql-replication on
it) takes the TLS the server offers, while pymysql 1.1 or `ssl_disabled` needs the
`cryptography` package for RSA; mysqlclient connects with ssl_mode DISABLED and libmariadb's
caching_sha2_password plugin does the RSA exchange (tests/integration/test_harness.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymysql
import pymysql.cursors

from tests.services import (
    REPL_PASSWORD,
    REPL_USER,
    ServerProcess,
    ServiceError,
    cdc_settings,
    create_users,
)

DEFAULT_ROOT = "/var/lib/gtidmark/mysql-sid"


def mysql_root() -> Path:
    return Path(os.environ.get("GTIDMARK_MYSQL_ROOT") or DEFAULT_ROOT)


def mysqld_command(root: Path | None = None) -> list[str]:
    """mysqld from the root, through the root's loader and libraries, with no option files."""
    root = root or mysql_root()
    loader, server = root / "lib64/ld-linux-x86-64.so.2", root / "usr/sbin/mysqld"
    if not loader.exists() or not server.exists():
        raise ServiceError(f"MySQL root not found at {root}: run `make setup`")
    libs = f"{root}/usr/lib/x86_64-linux-gnu:{root}/lib/x86_64-linux-gnu"
    share = root / "usr/share/mysql"
    return [
        str(loader), "--library-path", libs, str(server), "--no-defaults", "--user=root",
        f"--basedir={root / 'usr'}", f"--lc-messages-dir={share}",
        f"--character-sets-dir={share / 'charsets'}",
        f"--plugin-dir={root / 'usr/lib/mysql/plugin'}",
    ]


def _die_with_parent() -> list[str]:
    """A prefix that has the server shut down (SIGTERM) when the test process dies.

    The parent death signal fires when the *thread* that started the process ends, so only
    servers started from the main thread get it; setpriv (util-linux, essential on Debian)
    sets it and execs, no preexec_fn in a threaded process.
    """
    setpriv = shutil.which("setpriv")
    if setpriv is None or threading.current_thread() is not threading.main_thread():
        return []
    return [setpriv, "--pdeathsig", "TERM", "--"]


@dataclass
class MySql(ServerProcess):
    """One private mysqld, run from the sid root."""

    binlog_status = "SHOW BINARY LOG STATUS"

    def install(self) -> None:
        """`mysqld --initialize-insecure`: system tables, root@localhost without a password."""
        command = mysqld_command()
        if self.datadir.exists():  # a failed initialisation's leftovers: mysqld wants it empty
            shutil.rmtree(self.datadir)
        self.datadir.parent.mkdir(parents=True, exist_ok=True)
        out = subprocess.run(
            [*command, "--initialize-insecure", f"--datadir={self.datadir}",
             f"--log-error={self.base / self.name / 'initialize.log'}"],
            capture_output=True, text=True, check=False,
        )
        if out.returncode != 0:
            log = self.base / self.name / "initialize.log"
            tail = log.read_text(errors="replace")[-800:] if log.exists() else out.stderr[-800:]
            shutil.rmtree(self.datadir, ignore_errors=True)
            raise ServiceError(f"mysqld --initialize-insecure failed for {self.name}: {tail}")

    def command(self) -> list[str]:
        args = [
            *mysqld_command(), f"--datadir={self.datadir}", f"--port={self.port}",
            "--bind-address=127.0.0.1", f"--socket={self.socket}",
            f"--pid-file={self.base / self.name / 'mysqld.pid'}", f"--log-error={self.log}",
            f"--server-id={self.server_id}", f"--log-bin={self.datadir / 'binlog'}",
            "--gtid-mode=ON", "--enforce-gtid-consistency=ON", "--binlog-format=ROW",
            "--binlog-row-image=FULL", "--binlog-row-metadata=FULL", "--mysqlx=OFF",
            "--secure-file-priv=", "--innodb-buffer-pool-size=256M",
            "--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0", "--skip-name-resolve",
            "--max-connections=500", "--innodb-redo-log-capacity=256M",
        ]
        if self.replica:
            # Multi-threaded on purpose: the snapshot's watermarks must hold on such a replica.
            args += ["--read-only=ON", "--skip-replica-start", "--log-replica-updates=ON",
                     "--replica-parallel-workers=4", "--replica-preserve-commit-order=ON"]
        return args

    @property
    def installed(self) -> bool:
        return (self.datadir / "mysql.ibd").exists()

    def launch(self) -> list[str]:
        return [*_die_with_parent(), *self.command()]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self._end_binlog_dumps()
        super().stop()

    def _end_binlog_dumps(self) -> None:
        """KILL the binlog dump threads: a shutdown waits ~10 s on one whose replica has gone."""
        try:
            conn = self.root(connect_timeout=2, read_timeout=5)
        except pymysql.MySQLError:
            return  # stopped, or paused: SIGTERM as usual
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT id FROM information_schema.processlist "
                            "WHERE command LIKE 'Binlog Dump%'")
                for (thread,) in cur.fetchall():
                    cur.execute(f"KILL {int(thread)}")
        except pymysql.MySQLError:
            pass  # one ended meanwhile: the shutdown ends the others
        finally:
            conn.close()

    def gtid_executed(self) -> str:
        """`@@global.gtid_executed`, without the newlines MySQL puts between source UUIDs."""
        return str(self.execute("SELECT @@global.gtid_executed")[0][0]).replace("\n", "")

    def replica_status(self) -> dict[str, Any]:
        """SHOW REPLICA STATUS as a dict (empty when replication is not configured)."""
        conn = self.root(cursorclass=pymysql.cursors.DictCursor)
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW REPLICA STATUS")
                row = cur.fetchone()
                return dict(row) if row else {}
        finally:
            conn.close()


@dataclass
class MySqlPair:
    """A primary and a read-only, multi-threaded replica that follows it with GTID auto-position."""

    primary: MySql
    replica: MySql
    flavour = "mysql"

    @classmethod
    def create(cls, base: Path) -> MySqlPair:
        return cls(MySql("mysql-primary", base, server_id=11),
                   MySql("mysql-replica", base, server_id=12, replica=True))

    def start(self) -> None:
        # Both initialisations at once (about 3 s each); the servers start from this thread.
        pending = [server for server in (self.primary, self.replica) if not server.installed]
        if pending:
            with ThreadPoolExecutor(len(pending)) as pool:
                list(pool.map(MySql.install, pending))
        self.primary.start()
        self.replica.start()
        create_users(self.primary)
        self._follow()

    def _follow(self) -> None:
        p, r = self.primary, self.replica
        r.execute("STOP REPLICA")
        r.execute(
            f"CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT={p.port}, "
            f"SOURCE_USER='{REPL_USER}', SOURCE_PASSWORD='{REPL_PASSWORD}', "
            "SOURCE_AUTO_POSITION=1, GET_SOURCE_PUBLIC_KEY=1"
        )
        r.execute("START REPLICA")
        self.wait_synced()

    def stop(self) -> None:
        self.replica.stop()
        self.primary.stop()

    def another_replica(self, name: str, server_id: int) -> MySqlPair:
        """Start one more read-only replica of this primary (stop it with `.replica.stop()`)."""
        pair = MySqlPair(self.primary, MySql(name, self.primary.base, server_id=server_id,
                                             replica=True))
        pair.replica.start()
        pair._follow()
        return pair

    def restart_replica(self) -> None:
        """Stop and start the replica process (it resumes by GTID auto-position)."""
        self.replica.stop()
        self.replica.start()
        self.replica.execute("START REPLICA")

    def wait_synced(self, timeout: float = 120) -> str:
        """Block until the replica has applied all the primary executed (fails at once when
        the replica's applier has stopped on an error)."""
        target = self.primary.gtid_executed()
        if not target:
            return target
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            wait = max(1, min(2, int(left)))
            rows = self.replica.execute("SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s)",
                                        (target, wait))
            if rows[0][0] == 0:
                return target
            status = self.replica.replica_status()
            if status.get("Replica_SQL_Running") == "No":
                raise ServiceError(f"replica's applier stopped before {target}: "
                                   f"{status.get('Last_SQL_Error')!r}; {status}")
            if time.monotonic() >= deadline:
                raise ServiceError(f"replica did not reach {target} in {timeout}s: {status}")

    def cdc_settings(self) -> dict[str, Any]:
        """Connection settings for the least-privilege CDC user on the replica."""
        return cdc_settings(self.replica)
