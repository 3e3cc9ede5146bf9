"""Start-up checks: refuse a server whose binlog cannot be captured correctly.

Each setting a flavour requires silently loses or corrupts rows when wrong (a
statement-logged INSERT carries no row image, a MINIMAL image has no key in its
before-image), so the connector exits 2 with one line naming the server variable and the
value it needs, as Debezium does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from connector.config import ConfigError
from connector.flavours import COMMON_REQUIRED, MARIADB, MYSQL, Flavour, flavour_of_server


def _normalise(value: Any) -> str:
    text = value.decode() if isinstance(value, bytes) else str(value)
    return {"1": "ON", "0": "OFF"}.get(text, text).upper()


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """What the start-up checks read: global variables, the flavour, whether a replica."""

    variables: dict[str, str]
    flavour: Flavour
    replica: bool


def server_problem(settings: ServerSettings) -> str | None:
    """The first setting that prevents correct capture, as one line; None when all fit."""
    for req in settings.flavour.requirements(settings.variables, settings.replica):
        found = settings.variables.get(req.name)
        if found is None or _normalise(found) != req.needed:
            shown = "missing" if found is None else (_normalise(found) or "''")
            needed = req.needed or "''"
            return (f"database: server variable {req.name} is {shown}, gtidmark needs "
                    f"{req.name}={needed} ({req.why})")
    return None


def read_server_settings(conn: Any) -> ServerSettings:
    """The global variables both flavours' checks name, the flavour, whether a replica."""
    names = sorted({r.name for r in COMMON_REQUIRED} | {"gtid_strict_mode", "log_slave_updates"}
                   | set(MARIADB.probe_variables) | set(MYSQL.probe_variables))
    variables: dict[str, str] = {}
    with conn.cursor() as cur:
        cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN ("
                    + ",".join(["%s"] * len(names)) + ")", names)
        for name, value in cur.fetchall():
            variables[str(name).lower()] = _normalise(value)
        flavour = flavour_of_server(variables)
        replica = flavour.is_replica(cur)
    return ServerSettings(variables, flavour, replica)


def check_server(connect: Callable[[], Any]) -> Flavour:
    """The server's flavour; raise ConfigError (exit 2) naming the first server variable
    that must change."""
    conn = connect()
    try:
        settings = read_server_settings(conn)
    finally:
        conn.close()
    problem = server_problem(settings)
    if problem is not None:
        raise ConfigError(problem)
    return settings.flavour
