"""The README's *Migrating from Debezium*, run as written: its blocks are read out of the
README and run (the worker's address and the connector's name put in), so the procedure
cannot drift from what is tested.

On MySQL: Debezium's MySQL connector on the Kafka Connect worker reads the primary (its
initial snapshot, then streaming), is stopped per the README; gtidmark takes over on the
replica with the connector's own config and the worker's properties file; then Debezium is
resumed from gtidmark's offsets. All of them write the same topics: the tables rebuilt from
them equal the primary, and no change record is in them twice.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from connector.offsets.value import SNAPSHOT_KEY
from tests.connect_services import ConnectWorker
from tests.connector_tools import ConnectorProcess
from tests.integration.test_debezium_migration import (
    debezium_on_worker,
    lost_rows,
    worker_offsets,
)
from tests.kafka_services import Broker
from tests.kafka_tools import json_records
from tests.mysql_services import MySqlPair
from tests.services import wait_for
from tests.workload import TABLES, synced_workload

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
SECTION = README.split("\n## Migrating from Debezium\n", 1)[1].split("\n## ", 1)[0]
README_NAME, README_REST = "shop-connector", "http://connect:8083"


def block(tag: str) -> str:
    """The fenced block after `<!-- migrate:TAG -->` in the section."""
    found = re.findall(rf"<!-- migrate:{tag} -->\n```\w*\n(.*?)```", SECTION, re.DOTALL)
    assert len(found) == 1, f"one block tagged migrate:{tag} in the README's section"
    return str(found[0])


def commands(tag: str) -> list[str]:
    """The block's commands, one a line (`\\` continuations joined, comments kept)."""
    return [line for line in block(tag).replace("\\\n", " ").splitlines() if line.strip()]


class Shell:
    """Runs the README's shell lines in the user's directory, against the worker."""

    def __init__(self, cwd: Path, worker: ConnectWorker, name: str) -> None:
        self.cwd, self.worker, self.name = cwd, worker, name

    def run(self, line: str, **replace: str) -> str:
        text = line.replace(README_REST, f"http://127.0.0.1:{self.worker.port}")
        text = text.replace(README_NAME, self.name)
        for old, new in replace.items():
            text = text.replace(old, new)
        done = subprocess.run(["bash", "-c", text], cwd=self.cwd, capture_output=True,
                              text=True, timeout=60, check=False)
        assert done.returncode == 0, f"{line!r}: {done.returncode} {done.stderr}"
        return done.stdout


def change_records(bootstrap: str, db: str) -> list[dict[str, Any]]:
    return json_records(bootstrap, [f"{db}.{db}.{name}" for name in TABLES])


def since(records: list[dict[str, Any]], before: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of `records` after the first `before` of each topic (both read in order)."""
    counts = Counter(r["topic"] for r in before)
    seen: Counter[str] = Counter()
    out = []
    for record in records:
        seen[record["topic"]] += 1
        if seen[record["topic"]] > counts[record["topic"]]:
            out.append(record)
    return out


def repeated(records: list[dict[str, Any]]) -> list[Any]:
    """Change records present more than once: the same transaction's same row change
    (snapshot reads aside: a snapshot asked for reads rows an earlier one read)."""
    seen = Counter(json.dumps([r["topic"], r["key"]["payload"], p["source"].get("gtid"),
                               p["op"], p["before"], p["after"]], sort_keys=True)
                   for r in records if r["value"] is not None
                   for p in [r["value"]["payload"]] if p["op"] != "r")
    return [record for record, count in seen.items() if count > 1]


def reads(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["value"] and r["value"]["payload"]["op"] == "r"]


def snapshot_tables(offsets: dict[str, Any]) -> list[str]:
    """The tables of the snapshot running in gtidmark's offsets value."""
    state = offsets.get(SNAPSHOT_KEY)
    return [t["table"] for t in json.loads(state)["tables"]] if state else []


def signal(user: Path, *action: str) -> None:
    """`gtidmark signal` with the user's connector file and the worker's properties."""
    subprocess.run([sys.executable, "-m", "connector.cli", "signal", "--config",
                    "connector.json", "--worker", "connect-distributed.properties", *action],
                   cwd=user, check=True, capture_output=True, timeout=60)


def test_the_readmes_migration_from_debezium_and_back(
        mysql: MySqlPair, broker: Broker, connect_worker: ConnectWorker, unique_name: str,
        tmp_path: Path) -> None:
    db = unique_name
    user = tmp_path / "user"
    user.mkdir()
    workload = synced_workload(mysql, db, seed=71)
    workload.run(300, add_column_at=None)  # for Debezium's initial snapshot
    dbz = debezium_on_worker(connect_worker, mysql, {"name": f"{db}-connector", "config": {
        "topic.prefix": db, "database.include.list": db}}, tmp_path / "dbz", route="",
        database__port=str(mysql.primary.port), snapshot__mode="initial")
    shell = Shell(user, connect_worker, dbz.name)
    dbz.start()
    try:
        workload.run(300, add_column_at=None)
        mysql.wait_synced()
        dbz.wait_records(lambda _: lost_rows(mysql, broker, db, []) == 0, 180,
                         "Debezium to snapshot and stream the primary")

        # 1-2: the config saved, the connector stopped, its offsets read back.
        for line in commands("save"):
            shell.run(line)
        stop, status, offsets = commands("stop")
        shell.run(stop)
        assert '"state":"STOPPED"' in status
        wait_for(lambda: '"state":"STOPPED"' in shell.run(status), 60,
                 "the README's status line to say STOPPED", interval=0.5)
        handed = json.loads(shell.run(offsets))["offsets"]
        assert [o["partition"] for o in handed] == [{"server": db}]
        debezium_gtids = handed[0]["offset"]["gtids"]
        assert debezium_gtids  # Debezium's MySQL connector on MySQL: the primary's GTID set
        before = change_records(broker.bootstrap, db)
        workload.run(300, add_column_at=None)  # while neither runs

        # 3-4: the same config on the replica, gtidmark run as the README runs it.
        for line in commands("replica"):
            shell.run(line, **{'"replica.internal"': '"127.0.0.1"',
                               '"3306"': f'"{mysql.replica.port}"'})
        config = json.loads((user / "connector.json").read_text())
        assert config["name"] == dbz.name and config["database.port"] == str(mysql.replica.port)
        assert {k: v for k, v in config.items() if k not in ("database.hostname", "database.port")} \
            == {k: v for k, v in {"name": dbz.name, **dbz.connector_json}.items()
                if k not in ("database.hostname", "database.port")}
        shutil.copy(connect_worker.home / "connect-distributed.properties", user)
        (run,) = commands("run")
        args = shlex.split(run)
        assert args[:4] == ["gtidmark", "run", "--config", "connector.json"], run
        conn = ConnectorProcess(config, user)
        conn.run_options = [str(user / arg) if (user / arg).exists() else arg
                            for arg in args[4:]]
        conn.start()
        try:
            conn.wait_log("binlog stream open", timeout=120)
            for line in commands("log"):  # as far as its values (the README's example)
                shape = line.split(" gtids=", 1)[0].split(" GTID ", 1)[0]
                assert shape.removeprefix("INFO ") in conn.log(), f"the README's {line!r}"
            logged = re.search(r"offsets written by Debezium: gtids='([^']*)'", conn.log())
            assert logged is not None, conn.log()[-2000:]
            # The same set, as MySQL judges it: Debezium writes a tagged GTID's interval as
            # `uuid:1-1:tag:1-1`, the log in MySQL's canonical `uuid:1:tag:1`.
            assert mysql.primary.execute("SELECT GTID_SUBSET(%s, %s) AND GTID_SUBSET(%s, %s)",
                                         (logged[1], debezium_gtids, debezium_gtids,
                                          logged[1]))[0][0] == 1, (logged[1], debezium_gtids)
            workload.run(400, add_column_at=0.5)  # a DDL for Debezium's history to follow
            mysql.wait_synced()
            wait_for(lambda: lost_rows(mysql, broker, db, []) == 0, 180,
                     "gtidmark to carry on where Debezium stopped", interval=1.0)
            ours = since(change_records(broker.bootstrap, db), before)
            assert ours and not repeated(before + ours)
            assert not reads(ours)  # snapshot.mode=initial over Debezium's offsets: none
            # Stopped in a snapshot of its own: the offsets hold its state, which Debezium
            # does not take over (README, step 5).
            signal(user, "set-throttle", "--chunk-size", "10", "--chunk-delay-ms", "1000")
            signal(user, "execute-snapshot", "--tables", f"{db}.orders")
            doc = {"name": dbz.name, "config": config}
            wait_for(lambda: snapshot_tables(worker_offsets(connect_worker, doc)), 120,
                     "gtidmark's snapshot of orders in its offsets", interval=1.0)
        finally:
            assert conn.stop() == 0
        handed_back = worker_offsets(connect_worker, doc)
        assert snapshot_tables(handed_back) == [f"{db}.orders"], handed_back
        assert "snapshot" not in handed_back  # Debezium's key: a SnapshotType name or none
        gtidmarks = change_records(broker.bootstrap, db)
        workload.run(200, add_column_at=None)  # while neither runs

        # 5: the way back, Debezium resumed on the primary from gtidmark's offsets.
        (back,) = commands("back")
        shell.run(back)
        workload.run(200, add_column_at=None)
        workload.close()
        mysql.wait_synced()
        dbz.wait_records(lambda _: lost_rows(mysql, broker, db, []) == 0, 180,
                         "Debezium to carry on where gtidmark stopped")
    finally:
        assert dbz.stop() == 0
    everything = change_records(broker.bootstrap, db)
    back_again = since(everything, gtidmarks)
    assert back_again and not reads(back_again)  # Debezium streamed on, no snapshot
    assert not repeated(everything)
