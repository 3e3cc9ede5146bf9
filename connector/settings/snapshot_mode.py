"""Debezium's `snapshot.mode` values to the modes gtidmark runs, or the one line refusing them.

gtidmark's snapshot is incremental (DBLog): it always streams while it runs, so a value that
means "snapshot, then stop" is refused (exit 2) rather than run as something else.
`when_needed` snapshots as `initial` does, and again when the offsets' binlog is purged
(connector/start_position.py `usable_offsets`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)

MODES = ("initial", "no_data", "never", "always", "when_needed")
CONFIGURATION_BASED = "snapshot.mode.configuration.based."
# Debezium's older names for no_data: the schema history is rebuilt from the binlog here.
ALIASES = {
    "schema_only": "Debezium's older name for no_data",
    "recovery": "the schema history is rebuilt from the binlog, no data snapshot",
    "schema_only_recovery": "as recovery",
}
REFUSED = {
    "initial_only": "stops after the snapshot without streaming; gtidmark's snapshot is "
                    "incremental and streams while it runs: use initial",
    "custom": "runs a Java snapshotter class: use initial, no_data, never, always or "
              "when_needed",
}


@dataclass(frozen=True, slots=True)
class ConfigurationBased:
    """The `snapshot.mode.configuration.based.*` settings (Debezium's defaults: all false)."""

    snapshot_data: bool = False
    start_stream: bool = False
    snapshot_on_data_error: bool = False


def resolve(value: object, based: ConfigurationBased) -> str:
    """The mode gtidmark runs for a Debezium `snapshot.mode`; ValueError: one line why not."""
    mode = str(value).strip().lower()
    if mode in MODES:
        return mode
    if mode in ALIASES:
        log.info("config: snapshot.mode %s runs as no_data (%s)", mode, ALIASES[mode])
        return "no_data"
    if mode in REFUSED:
        raise ValueError(f"Debezium's {mode} {REFUSED[mode]}")
    if mode == "configuration_based":
        return _configuration_based(based)
    raise ValueError(f"one of {', '.join(MODES)} (or Debezium's schema_only, recovery, "
                     "schema_only_recovery, configuration_based)")


def _configuration_based(based: ConfigurationBased) -> str:
    if not based.start_stream:
        raise ValueError(f"configuration_based with {CONFIGURATION_BASED}start.stream=false "
                         "(Debezium's default) stops after the snapshot; gtidmark always "
                         f"streams: set {CONFIGURATION_BASED}start.stream=true, or use "
                         "initial or no_data")
    if based.snapshot_on_data_error and not based.snapshot_data:
        raise ValueError(f"configuration_based with {CONFIGURATION_BASED}snapshot.on.data."
                         f"error=true and {CONFIGURATION_BASED}snapshot.data=false streams "
                         "from the current position when the offsets' binlog is purged, "
                         "without the changes in between: set snapshot.data=true (as "
                         "when_needed) or snapshot.on.data.error=false")
    mode = ("when_needed" if based.snapshot_on_data_error else "initial") \
        if based.snapshot_data else "no_data"
    log.info("config: snapshot.mode configuration_based runs as %s (%ssnapshot.data=%s, "
             "snapshot.on.data.error=%s, start.stream=true; snapshot.schema and "
             "snapshot.on.schema.error change nothing here: schema history follows the "
             "binlog's DDL)", mode,
             CONFIGURATION_BASED, str(based.snapshot_data).lower(),
             str(based.snapshot_on_data_error).lower())
    return mode
