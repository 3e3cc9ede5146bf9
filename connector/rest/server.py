"""The HTTP server of `gtidmark run` (rest.port): a background thread, stdlib http.server.

Optional basic auth (rest.basic.auth.user / .password) guards every path except the
Kubernetes probes /health and /ready; a missing or wrong header gets 401 before any body is
read (connector/rest/gate.py). Connections are capped and a request must arrive in time
(connector/rest/connections.py). Request lines go to the DEBUG log; headers (the
credentials) are never logged.
"""

from __future__ import annotations

import io
import logging
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from confluent_kafka.admin import AdminClient

from connector.control import EngineControl
from connector.rest import connect, connections
from connector.rest.connections import CappedServer, DeadlineReader
from connector.rest.gate import Refusal, admit
from connector.rest.routes import Response, RestApp
from connector.settings.errors import ConfigError
from connector.settings.model import ConnectorConfig
from signals.send import send_signal

log = logging.getLogger("gtidmark.rest")


class _ClusterId:
    """The Kafka cluster id for GET /, asked once."""

    def __init__(self, settings: dict[str, str]) -> None:
        self._settings = settings
        self._value: str | None = None

    def __call__(self) -> str | None:
        if self._value is None:
            try:
                meta = AdminClient(dict(self._settings)).list_topics(timeout=5)
                self._value = meta.cluster_id
            except Exception as exc:  # noqa: BLE001 - GET / still answers, without it
                log.debug("kafka cluster id unknown: %s", exc)
        return self._value


class RestServer:
    def __init__(self, config: ConnectorConfig, control: EngineControl) -> None:
        self.config = config
        admin_settings = {k: v for k, v in config.producer_settings().items()
                          if k.startswith(("bootstrap.", "security.", "ssl.", "sasl."))}
        self.app = RestApp(config, control, send_signal, _ClusterId(admin_settings))
        try:
            self._httpd = CappedServer((config.rest_host, config.rest_port), self._handler())
        except OSError as exc:
            raise ConfigError(f"rest.port: cannot listen on {config.rest_host}:"
                              f"{config.rest_port} ({exc.strerror or exc})") from None
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="rest",
                                        daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def start(self) -> None:
        self._thread.start()
        log.info("REST API listening on http://%s:%d%s", self.config.rest_host, self.port,
                 " (basic auth)" if self.config.rest_auth_user else "")

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        app = self.app
        config = self.config

        class Handler(BaseHTTPRequestHandler):
            server_version = "gtidmark"
            protocol_version = "HTTP/1.1"
            _reader: DeadlineReader

            def setup(self) -> None:
                super().setup()
                self.rfile.close()  # socket.makefile's reader, replaced by one with a deadline
                self._reader = DeadlineReader(self.connection)
                self.rfile = io.BufferedReader(self._reader)

            def handle_one_request(self) -> None:
                self._reader.restart()
                super().handle_one_request()

            def handle_expect_100(self) -> bool:
                """`Expect: 100-continue`: a refusal instead of the go-ahead (RFC 9110)."""
                verdict = admit(urlsplit(self.path).path, self.headers, config)
                if isinstance(verdict, Refusal):
                    self._send(verdict.response, close=verdict.close)
                    return False
                return super().handle_expect_100()

            def _serve(self) -> None:
                try:
                    self._serve_checked()
                except OSError:
                    raise  # the connection broke or timed out: nothing can be answered
                except Exception as exc:  # noqa: BLE001 - one JSON error, never a trace
                    log.warning("REST %s: %s", self.command, " ".join(str(exc).split()))
                    self._send(Response(400, connect.error(400, "bad request")), close=True)

            def _serve_checked(self) -> None:
                url = urlsplit(self.path)
                verdict = admit(url.path, self.headers, config)
                if isinstance(verdict, Refusal):
                    self._send(verdict.response, close=verdict.close)
                    return
                body = self.rfile.read(verdict) if verdict > 0 else b""
                if len(body) < verdict:
                    self.close_connection = True  # the client went away mid-body
                    return
                self._send(app.handle(self.command, url.path, parse_qs(url.query), body))

            def _send(self, response: Response, *, close: bool = False) -> None:
                payload = response.payload()
                self.connection.settimeout(connections.SEND_TIMEOUT_S)
                self.send_response(response.status)
                if payload or response.status not in (202, 204):
                    self.send_header("Content-Type", response.content_type)
                self.send_header("Content-Length", str(len(payload)))
                for key, value in response.headers.items():
                    self.send_header(key, value)
                if close:
                    self.send_header("Connection", "close")  # sets close_connection too
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = do_HEAD = _serve

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("%s %s", self.address_string(), format % args)

        return Handler
