"""Start-up checks: refuse a server whose binlog cannot be captured correctly.

Each setting a flavour requires silently loses or corrupts rows when wrong (a
statement-logged INSERT carries no row image, a MINIMAL image has no key in its
before-image), so the connector exits 2 with one line per wrong server variable naming
the value it needs, as Debezium does, and then one my.cnf block that fixes them all: a
stock server needs four, and one restart rather than four (#24).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from connector.flavours import (
    COMMON_REQUIRED,
    MARIADB,
    MYSQL,
    Flavour,
    Requirement,
    flavour_of_server,
)
from connector.settings.errors import ConfigError


def _normalise(value: Any) -> str:
    text = value.decode() if isinstance(value, bytes) else str(value)
    return {"1": "ON", "0": "OFF"}.get(text, text).upper()


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """What the start-up checks read: global variables, the flavour, whether a replica."""

    variables: dict[str, str]
    flavour: Flavour
    replica: bool


def _wrong(settings: ServerSettings) -> list[tuple[Requirement, str | None]]:
    """The requirements the server misses, with the value it has (None: no such variable)."""
    out: list[tuple[Requirement, str | None]] = []
    for req in settings.flavour.requirements(settings.variables, settings.replica):
        found = settings.variables.get(req.name)
        if found is None or _normalise(found) != req.needed:
            out.append((req, None if found is None else _normalise(found)))
    return out


def _line(req: Requirement, found: str | None) -> str:
    shown = "missing" if found is None else (found or "''")
    needed = req.needed or "''"
    return (f"database: server variable {req.name} is {shown}, gtidmark needs "
            f"{req.name}={needed} ({req.why})")


def server_problems(settings: ServerSettings) -> list[str]:
    """One line per setting that prevents correct capture; empty when all fit."""
    return [_line(req, found) for req, found in _wrong(settings)]


def server_problem(settings: ServerSettings) -> str | None:
    """The first setting that prevents correct capture, as one line; None when all fit."""
    problems = server_problems(settings)
    return problems[0] if problems else None


def cnf_block(settings: ServerSettings) -> list[str]:
    """The my.cnf lines that fix every wrong setting (the README's block, in part); a
    variable the server lacks is a comment, since an unknown option stops the server."""
    wrong = _wrong(settings)
    width = max((len(req.name) for req, _ in wrong), default=0)
    lines = [settings.flavour.cnf_group]
    for req, found in wrong:
        line = f"{req.name:<{width}} = {req.cnf_value}"
        lines.append(line if found is not None else
                     f"# {line}  (not a variable of this server: a newer version needs it)")
    return lines


def server_report(settings: ServerSettings) -> str | None:
    """Every wrong setting, one line each, then the my.cnf block; None when all fit."""
    problems = server_problems(settings)
    if not problems:
        return None
    count = f"{len(problems)} setting{'s' if len(problems) > 1 else ''}"
    fix = (f"database: to fix the {count} at once, put these lines in the server's my.cnf "
           "and restart it (README: Setting up your database):")
    return "\n".join([*problems, fix, *cnf_block(settings)])


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
    """The server's flavour; raise ConfigError (exit 2) naming every server variable that
    must change, then the my.cnf block."""
    conn = connect()
    try:
        settings = read_server_settings(conn)
    finally:
        conn.close()
    report = server_report(settings)
    if report is not None:
        raise ConfigError(report)
    return settings.flavour
