"""Debezium signals: the message models, the Kafka and source (signal table) channels and
the sender."""

from signals.models import (
    AdditionalCondition,
    ExecuteSnapshot,
    Log,
    PauseSnapshot,
    ResumeSnapshot,
    SetThrottle,
    Signal,
    SignalRejected,
    StopSnapshot,
    parse_signal,
)

__all__ = [
    "AdditionalCondition",
    "ExecuteSnapshot",
    "Log",
    "PauseSnapshot",
    "ResumeSnapshot",
    "SetThrottle",
    "Signal",
    "SignalRejected",
    "StopSnapshot",
    "parse_signal",
]
