"""The --dead-letter file: records that cannot be applied, appended from the tables' threads."""

from __future__ import annotations

import logging
import threading

from spark_consumer.decoding.decode import BadRecord

log = logging.getLogger("spark_consumer")


class DeadLetters:
    """Appends bad records as JSON lines, counts them and logs each with its reason."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.count = 0
        self._lock = threading.Lock()

    def write(self, bad: list[BadRecord]) -> None:
        if not bad:
            return
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            self.count += len(bad)
            out.writelines(record.to_json() + "\n" for record in bad)
        for record in bad:
            log.warning("bad record %s[%d]@%d: %s (dead-lettered to %s)", record.topic,
                        record.partition, record.offset, record.reason, self.path)
