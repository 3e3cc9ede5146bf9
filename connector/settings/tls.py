"""TLS settings for the database connections, from `database.ssl.mode` / `database.ssl.ca`.

pymysql verifies nothing when no CA is given, even when asked to: `verify_ca` and
`verify_identity` without `database.ssl.ca` therefore use the system CA store, and a
machine without one is refused (exit 2) rather than connected unchecked.
"""

from __future__ import annotations

import os
import ssl
from typing import Any

from connector.settings.errors import ConfigError


def system_ca() -> dict[str, str]:
    """The system CA bundle and/or directory, as pymysql's `ca` / `capath`."""
    paths = ssl.get_default_verify_paths()
    found: dict[str, str] = {}
    if paths.cafile and os.path.isfile(paths.cafile):
        found["ca"] = paths.cafile
    if paths.capath and os.path.isdir(paths.capath):
        found["capath"] = paths.capath
    return found


def mysql_ssl(mode: str, ca: str | None) -> dict[str, Any] | None:
    """pymysql's `ssl` argument for a Debezium `database.ssl.mode`; None: no forced TLS."""
    if mode not in ("required", "verify_ca", "verify_identity"):
        return None
    if mode == "required":  # encrypted; the certificate is checked only against a given CA
        return {"ca": ca, "check_hostname": False} if ca else {"check_hostname": False}
    anchors = {"ca": ca} if ca else system_ca()
    if not anchors:
        raise ConfigError(f"database.ssl.ca: required with database.ssl.mode={mode} "
                          "(no system CA store found to verify the server certificate)")
    return {**anchors, "verify_mode": True, "check_hostname": mode == "verify_identity"}
