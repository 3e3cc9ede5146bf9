"""A private MariaDB of one test module, for server settings no shared test may see.

It runs with TLS (a certificate signed by a CA made here for the purpose) and the
connector's least-privilege user; tests change its GLOBAL variables and purge its binlogs.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from connector.gtid import MariaDbGtidPos
from tests.integration.test_streaming import committed_offsets
from tests.kafka_services import Broker
from tests.services import CDC_PASSWORD, CDC_USER, MariaDb, wait_for


def make_certificates(directory: Path) -> dict[str, Path]:
    """A CA and a server certificate for 127.0.0.1 signed by it (openssl)."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {name: directory / f"{name}.pem" for name in ("ca", "ca-key", "server", "server-key")}
    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
        "/CN=gtidmark test CA", "-keyout", str(paths["ca-key"]), "-out", str(paths["ca"]))
    csr = directory / "server.csr"
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout",
        str(paths["server-key"]), "-out", str(csr))
    ext = directory / "san.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", str(csr), "-CA", str(paths["ca"]), "-CAkey", str(paths["ca-key"]),
        "-CAcreateserial", "-days", "2", "-extfile", str(ext), "-out", str(paths["server"]))
    return paths


@dataclass
class SoloMariaDb(MariaDb):
    """A MariaDb with TLS options added to the usual command line."""

    certs: dict[str, Path] | None = None

    def command(self) -> list[str]:
        args = super().command()
        if self.certs:
            args += [f"--ssl-ca={self.certs['ca']}", f"--ssl-cert={self.certs['server']}",
                     f"--ssl-key={self.certs['server-key']}"]
        return args


@pytest.fixture(scope="module")
def solo(services_dir: Path, request: pytest.FixtureRequest) -> Iterator[SoloMariaDb]:
    name = f"solo-{request.module.__name__.rsplit('.', 1)[-1][-12:]}"
    certs = make_certificates(services_dir / name / "certs")
    db = SoloMariaDb(name, services_dir, server_id=7, certs=certs)
    try:
        db.start()
        db.execute(f"CREATE USER IF NOT EXISTS '{CDC_USER}'@'%' IDENTIFIED BY '{CDC_PASSWORD}'")
        db.execute(f"GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '{CDC_USER}'@'%'")
    except Exception as exc:  # noqa: BLE001 - a service that cannot start fails the tests
        db.stop()
        pytest.fail(f"private MariaDB could not start: {exc}", pytrace=False)
    yield db
    db.stop()


def solo_settings(solo: SoloMariaDb, prefix: str) -> dict[str, Any]:
    """connector_document overrides pointing the connector at `solo`."""
    return {"database__port": str(solo.port), "database__server__id": str(100 + solo.server_id)}


def wait_solo_caught_up(solo: SoloMariaDb, broker: Broker, doc: dict[str, Any],
                        timeout: float = 120) -> None:
    target = MariaDbGtidPos.parse(solo.gtid_binlog_pos())

    def covered() -> bool:
        offsets = committed_offsets(broker, doc)
        return offsets is not None and MariaDbGtidPos.parse(offsets["gtids"]).covers(target)

    wait_for(covered, timeout, f"committed offsets to cover {target}", interval=0.3)
