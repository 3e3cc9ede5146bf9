"""Flattened topics (a connector with `transforms=unwrap`, ExtractNewRecordState): refused.

Such a record carries the row alone; a delete is a null payload or, with
`delete.tombstone.handling.mode=rewrite`, a row marked `__deleted`, and which one depends on
settings the topic does not carry. Rather than guess, or dead-letter a whole topic and
report it caught up, the job stops before it commits anything of that topic.
"""

from __future__ import annotations

from collections.abc import Iterable

from spark_consumer.decoding.decode import FLATTENED, BadRecord


class FlattenedTopicError(RuntimeError):
    """A topic of flattened records (one line naming it and the setting)."""


def refuse_flattened(bad: Iterable[BadRecord]) -> None:
    """FlattenedTopicError when any of `bad` is a flattened record."""
    for record in bad:
        if record.reason.startswith(FLATTENED):
            raise FlattenedTopicError(
                f"topic {record.topic} holds flattened records (offset {record.offset}: the "
                "connector has transforms=unwrap, io.debezium.transforms.ExtractNewRecordState); "
                "spark-apply needs Debezium's change envelope: drop the unwrap transform for "
                "the topics spark-apply reads")
