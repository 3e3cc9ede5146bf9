"""`gtidmark status --json`: snapshot progress as numbers, the state the REST API reports."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from connector.gtid import GtidSet, MariaDbGtidPos
from connector.settings.parse import parse_config
from connector.snapshot.progress import TableProgress
from connector.status import lag_seconds, rest_state, transactions_behind

BASE: dict[str, Any] = {"database.hostname": "127.0.0.1", "database.user": "cdc",
                        "database.server.id": "5400", "topic.prefix": "shop",
                        "bootstrap.servers": "127.0.0.1:9"}


def test_progress_numbers_are_the_line_people_read() -> None:
    progress = TableProgress("shop.orders", rows=2500, estimate=10_000, started=1000.0)
    numbers = progress.numbers(now=1010.0)
    assert numbers == {"table": "shop.orders", "rows": 2500, "estimate": 10_000,
                       "total": 10_000, "percent": 25.0, "rows_per_s": 250.0, "eta_s": 30.0,
                       "started": 1000.0, "condition": None, "surrogate_key": None}
    assert progress.describe(now=1010.0) == ("shop.orders: 2500/10000 rows (25.0%), "
                                             "250 rows/s, ETA 30s")
    assert TableProgress("a.b", estimate=5, started=1000.0).numbers(now=1001.0)["eta_s"] is None


class _Connect(BaseHTTPRequestHandler):
    """Answers GET /connectors/shop/status as a Kafka Connect worker does."""

    def do_GET(self) -> None:
        if self.path != "/connectors/shop/status":
            self.send_error(404)
            return
        body = json.dumps({"name": "shop", "type": "source",
                           "connector": {"state": "RUNNING", "worker_id": "w:1"},
                           "tasks": [{"id": 0, "state": "FAILED", "worker_id": "w:1",
                                      "trace": "..."}]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def connect_port() -> Iterator[int]:
    server = HTTPServer(("127.0.0.1", 0), _Connect)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def test_status_reports_the_state_the_rest_api_gives(connect_port: int) -> None:
    config = parse_config({"name": "shop", "config": {**BASE, "rest.port": str(connect_port)}})
    assert rest_state(config) == {
        "connector": "RUNNING", "task": "FAILED",
        "from": f"http://127.0.0.1:{connect_port}/connectors/shop/status"}
    assert rest_state(parse_config({"name": "shop", "config": BASE})) is None  # no rest.port
    other = parse_config({"name": "other", "config": {**BASE, "rest.port": str(connect_port)}})
    assert rest_state(other) is None  # a 404: not this connector


def test_lag_is_the_transactions_the_replica_has_and_the_offsets_lack() -> None:
    """MariaDB: sequence numbers per domain (a new domain counts whole); MySQL: set difference."""
    assert transactions_behind(MariaDbGtidPos.parse("0-1-120,7-2-5"),
                               MariaDbGtidPos.parse("0-1-100")) == 25
    assert transactions_behind(MariaDbGtidPos.parse("0-1-100"),
                               MariaDbGtidPos.parse("0-1-100")) == 0
    uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    assert transactions_behind(GtidSet.parse(f"{uuid}:1-50:60-70"),
                               GtidSet.parse(f"{uuid}:1-40")) == 21


def test_lag_in_seconds_is_zero_when_caught_up_however_old_the_last_event() -> None:
    now = 1_000_000.0
    assert lag_seconds(0, int(now) - 3600, now) == 0.0  # an idle source: not an hour behind
    assert lag_seconds(5, int(now) - 42, now) == 42.0  # behind: the last event's age
    assert lag_seconds(5, 0, now) is None  # behind, and no event streamed to date it by
    assert lag_seconds(None, int(now) - 1, now) is None  # the replica did not answer
    assert lag_seconds(1, int(now) + 2, now) == 0.0  # a clock ahead of ours: not negative


def test_lag_of_both_flavours_is_zero_exactly_when_the_offsets_cover_the_replica() -> None:
    uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
    mysql = GtidSet.parse(f"{uuid}:1-50")
    assert lag_seconds(transactions_behind(mysql, GtidSet.parse(f"{uuid}:1-50")), 1, 9.0) == 0
    assert lag_seconds(transactions_behind(mysql, GtidSet.parse(f"{uuid}:1-49")), 1, 9.0) == 8
    maria = MariaDbGtidPos.parse("0-1-120,7-2-5")
    assert lag_seconds(transactions_behind(maria, MariaDbGtidPos.parse("0-1-120,7-2-5")), 1,
                       9.0) == 0
    assert lag_seconds(transactions_behind(maria, MariaDbGtidPos.parse("0-1-120")), 1,
                       9.0) == 8
