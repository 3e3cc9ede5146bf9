"""What a request's head alone decides, before a byte of its body is read.

An unauthenticated client must not make the server read (and hold) a body: credentials are
checked first (401, as Kafka Connect's JaasBasicAuthFilter), then the body's framing and
size (400, 411, 413). A refusal sent with a body still unread closes the connection.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from dataclasses import dataclass
from email.message import Message

from connector.rest import connect
from connector.rest.routes import Response
from connector.settings.model import ConnectorConfig

OPEN_PATHS = ("/health", "/ready")
MAX_BODY = 1 << 20
UNAUTHORIZED = "User cannot access the resource."  # Kafka Connect's JaasBasicAuthFilter


@dataclass(frozen=True)
class Refusal:
    response: Response
    close: bool  # a body may follow, unread: the connection cannot carry another request


def credentials_match(header: str | None, user: str, password: str) -> bool:
    """True if `header` is `Basic base64(user:password)`; constant-time on the secret."""
    if not header or not header.startswith("Basic "):
        return False
    try:
        given = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    name, sep, secret = given.partition(":")
    return bool(sep) and hmac.compare_digest(name.encode(), user.encode()) and \
        hmac.compare_digest(secret.encode(), password.encode())


def admit(path: str, headers: Message, config: ConnectorConfig) -> int | Refusal:
    """The body length to read, or the answer to give without reading it."""
    lengths = headers.get_all("Content-Length") or []
    chunked = headers.get("Transfer-Encoding") is not None
    body_follows = chunked or any(value.strip() not in ("", "0") for value in lengths)
    if config.rest_auth_user is not None and path not in OPEN_PATHS and \
            not credentials_match(headers.get("Authorization"), config.rest_auth_user,
                                  config.rest_auth_password or ""):
        return Refusal(Response(401, connect.error(401, UNAUTHORIZED),
                                headers={"WWW-Authenticate": 'Basic realm="gtidmark"'}),
                       close=body_follows)
    if chunked:
        return _refuse(411, "a request body needs a Content-Length")
    if len(set(lengths)) > 1 or not all(value.strip().isascii() and value.strip().isdigit()
                                        for value in lengths):
        return _refuse(400, "bad request")
    length = int(lengths[0]) if lengths else 0
    if length > MAX_BODY:
        return _refuse(413, "request body too large")
    return length


def _refuse(status: int, message: str) -> Refusal:
    return Refusal(Response(status, connect.error(status, message)), close=True)
