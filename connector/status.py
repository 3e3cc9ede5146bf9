"""`gtidmark status`: state, liveness, committed position, snapshot progress and lag, from
Kafka (offsets and status topics, the lease group) and the replica; no REST port needed."""

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
from connector.kafka.status_topic import connector_key, read_statuses, task_key
from connector.leadership.members import lease_members
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


def topic_state(config: ConnectorConfig) -> dict[str, Any] | None:
    """The connector's and its task's state as the last records of the status topic say
    (task None: a STOPPED connector has none); None when nothing was ever written there."""
    records = read_statuses(config)
    connector = records.get(connector_key(config.name))
    if connector is None:
        return None
    task = records.get(task_key(config.name))
    return {"connector": connector.state, "task": None if task is None else task.state,
            "trace": None if task is None else task.trace, "worker_id": connector.worker_id,
            "generation": connector.generation, "version": connector.version,
            "from": config.status_topic}


def transactions_behind(replica: Position, committed: Position) -> int:
    """How many transactions the replica has applied that the committed position lacks."""
    if isinstance(replica, GtidSet) and isinstance(committed, GtidSet):
        return len(replica.subtract(committed))
    if isinstance(replica, MariaDbGtidPos) and isinstance(committed, MariaDbGtidPos):
        # Sequence numbers grow by one per transaction within a domain (gtid_strict_mode).
        return sum(max(0, g.seq - (c.seq if (c := committed.get(g.domain)) else 0))
                   for g in replica)
    raise TypeError(f"positions of two flavours: {replica!r}, {committed!r}")


def lag_seconds(behind: int | None, last_event_ts: int, now: float) -> float | None:
    """Seconds the offsets are behind the replica: 0 when the replica has no transaction the
    offsets lack (an idle source is caught up, however old its last event), else the age of
    the last event streamed (the first one not streamed is younger: an upper bound). None
    when unknown."""
    if behind is None:
        return None
    if behind == 0:
        return 0.0
    if last_event_ts <= 0:
        return None
    return round(max(0.0, now - last_event_ts), 1)


def liveness(config: ConnectorConfig) -> dict[str, Any]:
    """The lease group's members: alive when any is; None without the group (ha.enabled
    false) or when the broker does not describe it."""
    if not config.ha_enabled:
        return {"alive": None, "instances": None, "group_members": None}
    members = lease_members(signal_client_settings(config, config.consumer_settings()),
                            f"{config.name}-leader", config.signal_kafka_topic)
    if members is None:
        return {"alive": None, "instances": None, "group_members": None}
    return {"alive": bool(members), "instances": [m.to_json() for m in members],
            "group_members": [m.client_id for m in members]}


def collect_status(config: ConnectorConfig) -> dict[str, Any]:
    require_kafka(config.consumer_settings())  # one line, not a 30 s wait and a traceback
    committed = read_committed(config)
    status: dict[str, Any] = {"connector": config.name, "topic.prefix": config.topic_prefix,
                              "committed": committed is not None,
                              "state": topic_state(config) or rest_state(config),
                              **liveness(config)}
    if committed is None:
        return status
    status.update({"gtids": committed.gtids, "file": committed.file, "pos": committed.pos,
                   "signal_offset": committed.signal_offset, "epoch": committed.epoch})
    writer = committed.writer
    status["active"] = None if writer is None else {**writer.to_json(),
                                                    "epoch": committed.epoch}
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
    status.update(replica_lag(config, committed.gtids, ts_sec))
    return status


def replica_lag(config: ConnectorConfig, gtids: str, last_event_ts: int) -> dict[str, Any]:
    """The replica's position, and how far the offsets are behind it in transactions and
    in seconds (null when the replica does not answer or the offsets have no gtids)."""
    try:
        settings = config.mysql_settings()
        settings["password"] = settings.pop("passwd")
        conn = pymysql.connect(**settings, connect_timeout=5)
        with conn.cursor() as cur:
            flavour = server_flavour(cur)
            replica = flavour.current_position(cur)
        conn.close()
    except pymysql.MySQLError as exc:
        return {"replica_gtids": f"unreachable ({exc.args[-1] if exc.args else exc})",
                "replica_behind": None, "lag_s": None}
    try:  # None for offsets without gtids (Debezium's file/pos) or of another server
        behind = transactions_behind(replica, flavour.position(gtids)) if gtids else None
    except (ValueError, TypeError):
        behind = None
    return {"replica_gtids": str(replica), "replica_behind": behind,
            "lag_s": lag_seconds(behind, last_event_ts, time.time())}


def state_line(state: dict[str, Any] | None) -> list[str]:
    """The state lines: the connector's and the task's, where they come from, a trace's
    first line."""
    if state is None:
        return [("  state:              unknown (nothing in the status topic, no REST port "
                "answering)")]
    task = state.get("task")
    where = state["from"]
    if "worker_id" in state:
        where = f"status topic {where}, written by {state['worker_id']}"
    lines = [(f"  state:              connector {state['connector']}, "
             f"task {task if task is not None else '- (none while STOPPED)'} ({where})")]
    trace = state.get("trace")
    if trace:
        lines.append(f"  task failure:       {trace.strip().splitlines()[0]}")
    return lines


def alive_line(config: ConnectorConfig, status: dict[str, Any]) -> str:
    alive = status.get("alive")
    if alive is None:
        why = ("ha.enabled=false: no lease group to ask" if not config.ha_enabled
               else "the broker did not describe the lease group")
        return f"  alive:              unknown ({why})"
    if not alive:
        return ("  alive:              no instance in the lease group (the state above is "
                "the last one written)")
    members = ", ".join(f"{m['client_id']}{' (leader)' if m['leader'] else ''} at {m['host']}"
                        for m in status["instances"])
    return f"  alive:              {members}"


def lag_line(status: dict[str, Any]) -> str:
    lag = status.get("lag_s")
    if lag is None:
        return "  lag:                unknown"
    if lag == 0:
        return "  lag:                0 s (caught up with the replica)"
    return f"  lag:                {lag} s (at most: the age of the last event streamed)"


def print_status(config: ConnectorConfig, as_json: bool = False) -> int:
    status = collect_status(config)
    if as_json:
        print(json.dumps(status, indent=2))
        return 0
    print(f"connector {status['connector']} (topic.prefix {status['topic.prefix']})")
    for line in state_line(status.get("state")):
        print(line)
    print(alive_line(config, status))
    if not status["committed"]:
        print("  no committed offsets yet")
        return 0
    print(f"  streaming position: gtids={status['gtids']} file={status['file']} "
          f"pos={status['pos']}")
    behind = status.get("replica_behind")
    print(f"  replica position:   gtids={status.get('replica_gtids')}"
          + ("" if behind is None else f" ({behind} transactions not yet streamed)"))
    print(lag_line(status))
    active = status.get("active")
    if active:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(active["since"]))
        print(f"  last offsets by:    {active['host']} pid {active['pid']}, epoch "
              f"{active['epoch']}, since {since} UTC")
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
