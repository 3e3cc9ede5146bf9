"""Several instances of one connector in tests: the group, its offsets records, freezing
an instance whole, and waiting for a leader's commits (test_ha and the exactly-once tests)."""

from __future__ import annotations

import contextlib
import json
import os
import signal as unix_signal
from pathlib import Path
from typing import Any

from connector.flavours import flavour_named
from tests.connector_tools import ConnectorProcess, SourcePair, connector_document, wait_until
from tests.integration.test_snapshot import make_table
from tests.kafka_services import Broker
from tests.kafka_tools import consume_all, list_topics
from tests.services import ServiceError

SESSION_MS = 6000  # Apache Kafka's group.min.session.timeout.ms


def offsets_records(broker: Broker, doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every offsets value this connector's instances wrote, in topic order."""
    topic = f"{doc['config']['topic.prefix']}-offsets"
    if topic not in list_topics(broker.bootstrap):
        return []
    key = json.dumps([doc["name"], {"server": doc["config"]["topic.prefix"]}],
                     separators=(",", ":")).encode()
    records = [json.loads(m.value()) for m in consume_all(broker.bootstrap, topic)
               if m.key() == key and m.value() is not None]
    for record in records:  # the writer's primitive fields, as one map for the tests
        record["writer"] = {"host": record["writer_host"], "pid": record["writer_pid"]}
    return records


def leader_record(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The newest record of the highest epoch's first writer (a second instance that took
    the same epoch leaves its start record and stops): what a start resumes from."""
    if not records:
        return None
    top = max(r["epoch"] for r in records)
    owner = next(r["writer"] for r in records if r["epoch"] == top)
    best: dict[str, Any] = [r for r in records if r["epoch"] == top and r["writer"] == owner][-1]
    return best


class Group:
    """Several instances of one connector, each with its own log."""

    def __init__(self, doc: dict[str, Any], base: Path, size: int) -> None:
        self.doc = doc
        self.procs = []
        for i in range(size):
            workdir = base / f"instance{i}"
            workdir.mkdir()
            self.procs.append(ConnectorProcess(doc, workdir))

    def start(self) -> None:
        for proc in self.procs:
            proc.start()

    def by_pid(self, pid: int) -> ConnectorProcess:
        return next(p for p in self.procs if p.proc is not None and p.proc.pid == pid)

    def wait_epoch_above(self, broker: Broker, epoch: int, timeout: float = 120
                         ) -> dict[str, Any]:
        def newer() -> dict[str, Any] | None:
            record = leader_record(offsets_records(broker, self.doc))
            return record if record is not None and record["epoch"] > epoch else None
        found: dict[str, Any] = self._wait(newer, timeout, f"an epoch above {epoch}")
        return found

    def _wait(self, predicate: Any, timeout: float, what: str) -> Any:
        try:
            return wait_until(predicate, timeout, what)
        except ServiceError as exc:
            tails = "\n".join(p.log()[-1500:] for p in self.procs)
            raise AssertionError(f"{exc}; the instances' logs end with:\n{tails}") from None

    def wait_committed_in_epoch(self, broker: Broker, claim: dict[str, Any],
                                timeout: float = 120) -> dict[str, Any]:
        """A record of the claim's epoch after the claim: the new leader streams and commits."""
        def committed() -> dict[str, Any] | None:
            mine = [r for r in offsets_records(broker, self.doc)
                    if r["epoch"] == claim["epoch"] and r["writer"] == claim["writer"]]
            return mine[-1] if len(mine) > 1 else None
        found: dict[str, Any] = self._wait(committed, timeout,
                                           f"a commit in epoch {claim['epoch']}")
        return found

    def logs(self) -> str:
        return "\n".join(p.log() for p in self.procs)

    def stop_all(self) -> None:
        for proc in self.procs:
            proc.ensure_stopped()


def descendants(pid: int) -> list[int]:
    """The process and all its children (the binlog reader is a child process)."""
    out = [pid]
    with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # a thread just ended
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                out += descendants(int(child))
    return out


def freeze(proc: ConnectorProcess) -> list[int]:
    """SIGSTOP an instance whole, as a paused VM or a frozen container is."""
    assert proc.proc is not None
    pids = descendants(proc.proc.pid)
    for pid in pids:
        os.kill(pid, unix_signal.SIGSTOP)
    return pids


def thaw(pids: list[int]) -> None:
    for pid in reversed(pids):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, unix_signal.SIGCONT)


def wait_covered(mariadb: SourcePair, broker: Broker, doc: dict[str, Any],
                 timeout: float = 240) -> None:
    flavour = flavour_named(mariadb.flavour)
    target = flavour.position(mariadb.wait_synced())

    def covered() -> bool:
        record = leader_record(offsets_records(broker, doc))
        return record is not None and flavour.position(record["gtids"]).covers(target)

    wait_until(covered, timeout, f"the leader's offsets to cover {target}")


def leading_group(mariadb: SourcePair, broker: Broker, group_factory: Any, db: str,
                  rows: int, size: int = 2, **extra: Any
                  ) -> tuple[dict[str, Any], Group, dict[str, Any]]:
    """`db`.big of `rows` rows and `size` instances started: (document, group, first claim)."""
    make_table(mariadb, db, rows)
    doc = connector_document(mariadb, broker, db, ha__session__timeout__ms=str(SESSION_MS),
                             **extra)
    group: Group = group_factory(doc, size)
    group.start()
    return doc, group, group.wait_epoch_above(broker, 0)


def thaw_until_stepped_down(zombie: ConnectorProcess, frozen: list[int]) -> int:
    """Resume a frozen former leader until it steps down; its log length before, for the
    test's further waits on what it logs next."""
    mark = len(zombie.log())
    thaw(frozen)
    zombie.wait_log("stepping down to standby", after=mark, timeout=30)
    return mark
