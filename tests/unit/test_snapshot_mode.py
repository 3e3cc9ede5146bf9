"""snapshot.mode: Debezium's values run as what they mean, or stop the start with one line."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from connector.offsets.value import ConnectorOffsets
from connector.settings.errors import ConfigError
from connector.snapshot.state import SnapshotState
from connector.start_position import snapshot_at_start
from tests.unit.test_config import cfg, doc, run_cli

BASED = "snapshot.mode.configuration.based."


def based(**settings: str) -> dict[str, str]:
    return {f"{BASED}{k.replace('_', '.')}": v for k, v in settings.items()}


@pytest.mark.parametrize(("settings", "runs_as", "line"), [
    ({"snapshot.mode": "initial"}, "initial", None),
    ({"snapshot.mode": "NEVER"}, "never", None),
    ({"snapshot.mode": "always"}, "always", None),
    ({"snapshot.mode": "When_Needed"}, "when_needed", None),
    ({"snapshot.mode": "schema_only"}, "no_data",
     "config: snapshot.mode schema_only runs as no_data (Debezium's older name for no_data)"),
    ({"snapshot.mode": "recovery"}, "no_data", ("config: snapshot.mode recovery runs as no_data "
     "(the schema history is rebuilt from the binlog, no data snapshot)")),
    ({"snapshot.mode": "configuration_based", **based(snapshot_data="true", start_stream="true")},
     "initial", ("config: snapshot.mode configuration_based runs as initial ("
     f"{BASED}snapshot.data=true, snapshot.on.data.error=false, start.stream=true; "
     "snapshot.schema and snapshot.on.schema.error change nothing here: schema history "
     "follows the binlog's DDL)")),
    ({"snapshot.mode": "configuration_based", **based(
        snapshot_data="true", start_stream="true", snapshot_on_data_error="true")},
     "when_needed", ("config: snapshot.mode configuration_based runs as when_needed ("
     f"{BASED}snapshot.data=true, snapshot.on.data.error=true, start.stream=true; "
     "snapshot.schema and snapshot.on.schema.error change nothing here: schema history "
     "follows the binlog's DDL)")),
    ({"snapshot.mode": "configuration_based", **based(start_stream="true",
                                                      snapshot_schema="true")},
     "no_data", ("config: snapshot.mode configuration_based runs as no_data ("
     f"{BASED}snapshot.data=false, snapshot.on.data.error=false, start.stream=true; "
     "snapshot.schema and snapshot.on.schema.error change nothing here: schema history "
     "follows the binlog's DDL)")),
])
def test_accepted_values_run_as_the_mode_they_mean(
        settings: dict[str, str], runs_as: str, line: str | None,
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="connector.settings"):
        config = cfg(**{k.replace(".", "__"): v for k, v in settings.items()})
    assert config.snapshot_mode == runs_as
    assert [r.getMessage() for r in caplog.records] == ([] if line is None else [line])


@pytest.mark.parametrize(("settings", "reason"), [
    ({"snapshot.mode": "initial_only"}, ("Debezium's initial_only stops after the snapshot "
     "without streaming; gtidmark's snapshot is incremental and streams while it runs: use "
     "initial (got 'initial_only')")),
    ({"snapshot.mode": "custom"}, ("Debezium's custom runs a Java snapshotter class: use "
     "initial, no_data, never, always or when_needed (got 'custom')")),
    ({"snapshot.mode": "configuration_based", **based(snapshot_data="true")},
     (f"configuration_based with {BASED}start.stream=false (Debezium's default) stops after "
     f"the snapshot; gtidmark always streams: set {BASED}start.stream=true, or use initial "
     "or no_data (got 'configuration_based')")),
    ({"snapshot.mode": "configuration_based",
      **based(start_stream="true", snapshot_on_data_error="true")},
     (f"configuration_based with {BASED}snapshot.on.data.error=true and {BASED}snapshot.data="
     "false streams from the current position when the offsets' binlog is purged, without "
     "the changes in between: set snapshot.data=true (as when_needed) or "
     "snapshot.on.data.error=false (got 'configuration_based')")),
])
def test_values_gtidmark_cannot_honour_are_refused_with_one_line(
        settings: dict[str, str], reason: str) -> None:
    with pytest.raises(ConfigError) as err:
        cfg(**{k.replace(".", "__"): v for k, v in settings.items()})
    assert str(err.value) == f"config: snapshot.mode: {reason}"


def test_a_refused_value_exits_2_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "connector.json"
    path.write_text(json.dumps(doc(snapshot__mode="initial_only")))
    result = run_cli("run", "--config", str(path))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        (f"error: {path}: snapshot.mode: Debezium's initial_only stops after the snapshot "
        "without streaming; gtidmark's snapshot is incremental and streams while it runs: use "
        "initial (got 'initial_only')")]


OFFSETS = ConnectorOffsets(gtids="0-1-5")
IN_PROGRESS = ConnectorOffsets(gtids="0-1-5", snapshot=SnapshotState(id="s1"))


@pytest.mark.parametrize(("mode", "stored", "snapshots"), [
    ("initial", None, True), ("initial", OFFSETS, False),
    ("always", None, True), ("always", OFFSETS, True), ("always", IN_PROGRESS, False),
    ("no_data", None, False), ("no_data", OFFSETS, False),
    ("never", None, False), ("never", OFFSETS, False),
    ("when_needed", None, True), ("when_needed", OFFSETS, False),
    ("when_needed", IN_PROGRESS, False),
])
def test_always_snapshots_on_every_start_and_initial_only_on_the_first(
        mode: str, stored: ConnectorOffsets | None, snapshots: bool) -> None:
    """A snapshot in progress in the offsets goes on (restored) rather than starting anew."""
    assert snapshot_at_start(mode, stored) is snapshots
