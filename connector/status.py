"""`gtidmark status`: committed position, snapshot progress and lag, from the offsets topic."""

from __future__ import annotations

import base64
import json
import time
import urllib.parse
import urllib.request
from typing import Any

import pymysql

from connector.flavours import server_flavour
from connector.gtid import GtidSet, MariaDbGtidPos, Position
from connector.kafka.reach import require_kafka
from connector.leadership.lease import group_members
from connector.offsets.store import read_committed
from connector.settings.model import ConnectorConfig
from signals.channel import signal_client_settings


def rest_state(config: ConnectorConfig, timeout: float = 2.0) -> dict[str, Any] | None:
    """The connector's and its task's state as the REST API at rest.host:rest.port reports
    them (Kafka Connect's status shape); None without rest.port or when nothing answers."""
    if not config.rest_port:
        return None
    host = "127.0.0.1" if config.rest_host in ("0.0.0.0", "::", "") else config.rest_host
    host = f"[{host}]" if ":" in host else host
    url = (f"http://{host}:{config.rest_port}/connectors/"
           f"{urllib.parse.quote(config.name, safe='')}/status")
    request = urllib.request.Request(url)
    if config.rest_auth_user is not None:
        token = f"{config.rest_auth_user}:{config.rest_auth_password or ''}".encode()
        request.add_header("Authorization", f"Basic {base64.b64encode(token).decode()}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            doc = json.load(response)
        tasks = doc.get("tasks") or []
        return {"connector": str(doc["connector"]["state"]),
                "task": str(tasks[0]["state"]) if tasks else None, "from": url}
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def transactions_behind(replica: Position, committed: Position) -> int:
    """How many transactions the replica has applied that the committed position lacks."""
    if isinstance(replica, GtidSet) and isinstance(committed, GtidSet):
        return len(replica.subtract(committed))
    if isinstance(replica, MariaDbGtidPos) and isinstance(committed, MariaDbGtidPos):
        # Sequence numbers grow by one per transaction within a domain (gtid_strict_mode).
        return sum(max(0, g.seq - (c.seq if (c := committed.get(g.domain)) else 0))
                   for g in replica)
    raise TypeError(f"positions of two flavours: {replica!r}, {committed!r}")


def collect_status(config: ConnectorConfig) -> dict[str, Any]:
    require_kafka(config.consumer_settings())  # one line, not a 30 s wait and a traceback
    committed = read_committed(config)
    status: dict[str, Any] = {"connector": config.name, "topic.prefix": config.topic_prefix,
                              "committed": committed is not None, "state": rest_state(config)}
    if committed is None:
        return status
    status.update({"gtids": committed.gtids, "file": committed.file, "pos": committed.pos,
                   "signal_offset": committed.signal_offset, "epoch": committed.epoch})
    writer = committed.writer
    status["active"] = None if writer is None else {**writer.to_json(),
                                                    "epoch": committed.epoch}
    status["group_members"] = group_members(
        signal_client_settings(config, config.consumer_settings()), f"{config.name}-leader")
    ts_sec = committed.ts_sec
    status["last_event_age_s"] = round(time.time() - ts_sec, 1) if ts_sec else None
    snapshot = committed.snapshot
    if snapshot is not None and snapshot.active:
        status["snapshot"] = {"id": snapshot.id, "paused": snapshot.paused,
                              "chunk_size": snapshot.chunk_size,
                              "chunk_delay_ms": snapshot.chunk_delay_ms,
                              "tables": [t.describe() for t in snapshot.tables],
                              "progress": [t.numbers() for t in snapshot.tables]}
    if snapshot is not None and snapshot.failed:
        status["snapshot_failed"] = [f.to_json() for f in snapshot.failed]
    try:
        settings = config.mysql_settings()
        settings["password"] = settings.pop("passwd")
        conn = pymysql.connect(**settings, connect_timeout=5)
        with conn.cursor() as cur:
            flavour = server_flavour(cur)
            replica = flavour.current_position(cur)
        conn.close()
        status["replica_gtids"] = str(replica)
        try:  # None for offsets without gtids (Debezium's file/pos) or of another server
            status["replica_behind"] = transactions_behind(
                replica, flavour.position(committed.gtids)) if committed.gtids else None
        except (ValueError, TypeError):
            status["replica_behind"] = None
    except pymysql.MySQLError as exc:
        status["replica_gtids"] = f"unreachable ({exc.args[-1] if exc.args else exc})"
        status["replica_behind"] = None
    return status


def print_status(config: ConnectorConfig, as_json: bool = False) -> int:
    status = collect_status(config)
    if as_json:
        print(json.dumps(status, indent=2))
        return 0
    print(f"connector {status['connector']} (topic.prefix {status['topic.prefix']})")
    if not status["committed"]:
        print("  no committed offsets yet")
        return 0
    print(f"  streaming position: gtids={status['gtids']} file={status['file']} "
          f"pos={status['pos']}")
    behind = status.get("replica_behind")
    print(f"  replica position:   gtids={status.get('replica_gtids')}"
          + ("" if behind is None else f" ({behind} transactions not yet streamed)"))
    active = status.get("active")
    if active:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(active["since"]))
        print(f"  active instance:    {active['host']} pid {active['pid']}, epoch "
              f"{active['epoch']}, since {since} UTC")
    members = status.get("group_members")
    print(f"  instances in group: {', '.join(members) if members else 'not reported by the broker'}")
    age = status.get("last_event_age_s")
    print(f"  last event applied: {'-' if age is None else f'{age}s ago'}")
    snap = status.get("snapshot")
    if snap:
        print(f"  snapshot {snap['id']}{' (paused)' if snap['paused'] else ''}, "
              f"chunk size {snap['chunk_size']}:")
        for line in snap["tables"]:
            print(f"    {line}")
    else:
        print("  no snapshot running")
    for failed in status.get("snapshot_failed", []):
        print(f"  snapshot of {failed['table']} FAILED ({failed['reason']}): its rows were not "
              "all sent; send execute-snapshot for it again")
    return 0
