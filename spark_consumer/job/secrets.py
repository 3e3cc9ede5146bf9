"""Secret setting values kept out of the job's log lines and error lines.

A setting is secret when its key says so (Spark's own redaction words, and Iceberg's and
librdkafka's credential keys); its value is replaced by `***` wherever a log record or the
final error line would show it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

SECRET_KEY = re.compile(r"(?i)secret|password|passwd|token|credential|access[._-]?key|"
                        r"private|jaas|\.pem$")
MASK = "***"
MIN_SECRET = 4  # shorter values would mask ordinary text; nobody's secret is that short


def secret_values(*confs: dict[str, str]) -> list[str]:
    """The values of the secret keys of `confs`, longest first (so none masks part of one)."""
    found = {v for conf in confs for k, v in conf.items()
             if SECRET_KEY.search(k) and len(v) >= MIN_SECRET}
    return sorted(found, key=len, reverse=True)


class Redactor(logging.Filter):
    """A handler filter that masks `values` in every record's message, and in any text."""

    def __init__(self, values: Iterable[str]) -> None:
        super().__init__()
        self.values = list(values)

    def redact(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, MASK)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.values:
            return True
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        masked = self.redact(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        return True


def install(values: list[str]) -> Redactor:
    """Mask `values` in what every handler of the root logger writes."""
    redactor = Redactor(values)
    for handler in logging.getLogger().handlers:
        handler.addFilter(redactor)
    return redactor
