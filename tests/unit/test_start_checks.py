"""The one line a failed database connection gives, from pymysql's own error texts."""

from __future__ import annotations

import pymysql

from connector.settings.parse import parse_config
from connector.start_checks import database_failure

CONFIG = parse_config({"name": "c", "config": {
    "database.hostname": "127.0.0.1", "database.port": "3307", "database.user": "cdc",
    "database.server.id": "5", "topic.prefix": "p", "bootstrap.servers": "b"}})
WHERE = "cannot reach the database at 127.0.0.1:3307 (database.hostname, database.port): "


def test_a_refused_connection_is_named_without_pymysqls_wrapping() -> None:
    exc = pymysql.err.OperationalError(
        2003, "Can't connect to MySQL server on '127.0.0.1' ([Errno 111] Connection refused)")
    assert database_failure(CONFIG, exc) == WHERE + "connection refused"


def test_a_failed_certificate_check_keeps_the_tls_reason() -> None:
    tls = ("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed "
           "certificate in certificate chain (_ssl.c:1006)")
    exc = pymysql.err.OperationalError(
        2003, f"Can't connect to MySQL server on '127.0.0.1' ({tls})")
    # Before: only "_ssl.c:1006", the text inside the last parentheses.
    assert database_failure(CONFIG, exc) == WHERE + tls
