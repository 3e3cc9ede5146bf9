"""The offsets record's value: one typed contract for every writer and reader of it.

Kafka Connect's shape for a MySQL/MariaDB source (`gtids`, `file`, `pos`, `event`, `row`,
`server_id`, `ts_sec`) plus our own `snapshot_state` (a `SnapshotState` as a JSON string,
null when none runs; not `snapshot`, which Debezium reads as a SnapshotType name and stops
on anything else), `signal_offset`, `signal_in_progress` and `signal_attempt` (a `SignalMark`, present only
while a signal is being acted on, or a start has still to pass one: connector/offsets/
signal_mark.py), `signal_source_gtid`, `signal_source_row` and `signal_source_attempt`
(a `SourceMark`: the same for a row of the signal table), and the HA
writer (`epoch`, `writer_host/pid/since`).
A record written by Debezium has no `signal_offset` key; `connector.offsets.debezium`
translates those.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from connector.leadership.lease import Instance
from connector.offsets.mark import SignalMark, SourceMark
from connector.snapshot.state import SnapshotState

SNAPSHOT_KEY = "snapshot_state"
LEGACY_SNAPSHOT_KEY = "snapshot"  # where earlier versions kept it (still read)


def snapshot_raw(data: dict[str, Any]) -> Any:
    """The snapshot state as a record holds it (a JSON string, or a map before 0.2)."""
    if data.get(SNAPSHOT_KEY) is not None:
        return data[SNAPSHOT_KEY]
    return data.get(LEGACY_SNAPSHOT_KEY)


@dataclass(frozen=True, slots=True)
class ConnectorOffsets:
    gtids: str = ""
    file: str = ""
    pos: int = 0
    event: int = 0
    row: int = 0
    server_id: int = 0
    ts_sec: int = 0
    snapshot: SnapshotState | None = None
    signal_offset: int | None = None
    signal_in_progress: SignalMark | None = None  # the signal being acted on when written
    source_signal_in_progress: SourceMark | None = None  # the same for the signal table
    epoch: int = 0  # the writer's leadership epoch (HA): the highest on the topic wins
    writer: Instance | None = None  # who wrote it: host, pid, active since

    def to_json(self) -> dict[str, Any]:
        """Primitive values only, as Kafka Connect's offset reader requires (a map in an
        offsets value makes Debezium drop the whole value): the snapshot state goes as a
        JSON string, like Debezium's own `incremental_snapshot_collections`, under a key
        Debezium does not read, so that Debezium resumes from these offsets."""
        snapshot = None if self.snapshot is None else json.dumps(
            self.snapshot.to_json(), separators=(",", ":"))
        writer = self.writer
        return {"gtids": self.gtids, "file": self.file, "pos": self.pos, "event": self.event,
                "row": self.row, "server_id": self.server_id, "ts_sec": self.ts_sec,
                SNAPSHOT_KEY: snapshot, "signal_offset": self.signal_offset,
                **({} if self.signal_in_progress is None else
                   self.signal_in_progress.to_json()),
                **({} if self.source_signal_in_progress is None else
                   self.source_signal_in_progress.to_json()),
                "epoch": self.epoch,
                "writer_host": None if writer is None else writer.host,
                "writer_pid": None if writer is None else writer.pid,
                "writer_since": None if writer is None else round(writer.since, 3)}

    def to_bytes(self) -> bytes:
        return json.dumps(self.to_json(), separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ConnectorOffsets:
        """Also the shapes earlier versions wrote: the state under `snapshot` (before 0.2
        with it and `writer` as maps)."""
        signal_offset = data.get("signal_offset")
        snapshot = snapshot_raw(data)
        if isinstance(snapshot, str):
            snapshot = json.loads(snapshot)
        writer = data.get("writer")
        if writer is None and data.get("writer_pid") is not None:
            writer = {"host": data.get("writer_host"), "pid": data.get("writer_pid"),
                      "since": data.get("writer_since")}
        return cls(gtids=str(data.get("gtids") or ""), file=str(data.get("file") or ""),
                   pos=int(data.get("pos") or 0), event=int(data.get("event") or 0),
                   row=int(data.get("row") or 0), server_id=int(data.get("server_id") or 0),
                   ts_sec=int(data.get("ts_sec") or 0),
                   snapshot=SnapshotState.from_json(snapshot) if snapshot else None,
                   signal_offset=None if signal_offset is None else int(signal_offset),
                   signal_in_progress=SignalMark.from_json(data),
                   source_signal_in_progress=SourceMark.from_json(data),
                   epoch=int(data.get("epoch") or 0),
                   writer=Instance.from_json(writer))


def written_by_gtidmark(data: dict[str, Any]) -> bool:
    """Our records always carry `signal_offset` (null before the first signal); Debezium's never."""
    return "signal_offset" in data
