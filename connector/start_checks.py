"""`gtidmark run`'s first look: the database and Kafka checked at the same time, and every
failure named in one line each before anything waits on either (#24).

A wrong database port used to show only after a 30 s wait on Kafka, as a raw pymysql tuple.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

import pymysql

from connector.kafka.reach import KafkaUnreachable, require_kafka
from connector.preflight import check_server
from connector.settings.errors import ConfigError
from connector.settings.model import ConnectorConfig

# pymysql's client-side codes for a server that does not answer (CR_CONNECTION_ERROR,
# CR_CONN_HOST_ERROR, CR_UNKNOWN_HOST, CR_SERVER_LOST).
_UNREACHABLE = {2002, 2003, 2005, 2013}
_DENIED = {1044, 1045, 1698}
# pymysql's text: "Can't connect to MySQL server on 'host' (<the socket or TLS error>)".
_CANT_CONNECT = re.compile(r"Can't connect to \w+ server on \S+ \((?P<why>.*)\)$",
                           re.DOTALL)
_ERRNO = re.compile(r"^\[Errno -?\d+\] ")


class ServicesUnreachable(RuntimeError):
    """The database or Kafka did not answer (the line of each that did not); `lines` are
    what the command exits 1 with, the database's first."""

    def __init__(self, database: str | None, kafka: str | None) -> None:
        self.database, self.kafka = database, kafka
        self.lines = [line for line in (database, kafka) if line is not None]
        super().__init__("\n".join(self.lines))


def database_failure(config: ConnectorConfig, exc: Exception) -> str:
    """One line for a failed database connection, naming the settings to look at."""
    code = exc.args[0] if isinstance(exc, pymysql.MySQLError) and exc.args and \
        isinstance(exc.args[0], int) else None
    text = str(exc.args[-1]) if exc.args else str(exc)
    where = f"the database at {config.hostname}:{config.port}"
    if code in _UNREACHABLE:
        found = _CANT_CONNECT.match(text)
        reason = _ERRNO.sub("", found["why"] if found else text)
        return (f"cannot reach {where} (database.hostname, database.port): "
                f"{reason[:1].lower()}{reason[1:]}")
    if code in _DENIED:
        return f"{where} refused user {config.user!r} (database.user, database.password): {text}"
    return f"{where}: {text}" + (f" (error {code})" if code is not None else "")


def check_services(config: ConnectorConfig, connect: Callable[[], Any]) -> None:
    """Raise ConfigError (exit 2: the preflight's lines, then any unreachable service) or
    ServicesUnreachable naming every failure found (exit 1, except a database alone failing
    with REST: the task is FAILED until a restart); return when both answer."""
    refused: list[ConfigError] = []  # the preflight's report
    unreachable: list[str] = []  # the database's line
    kafka: str | None = None

    def database() -> None:
        try:
            check_server(connect)
        except ConfigError as exc:
            refused.append(exc)
        except Exception as exc:  # noqa: BLE001 - named in one line, as Kafka's is
            unreachable.append(database_failure(config, exc))

    thread = threading.Thread(target=database, name="check-database", daemon=True)
    thread.start()
    try:
        require_kafka(config.consumer_settings())
    except KafkaUnreachable as exc:
        kafka = str(exc)
    thread.join()
    if refused:
        raise ConfigError("\n".join([str(refused[0]), *([kafka] if kafka else [])]))
    if unreachable or kafka:
        raise ServicesUnreachable(unreachable[0] if unreachable else None, kafka)
