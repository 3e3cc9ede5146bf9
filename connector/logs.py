"""The connector's log format, shared by `gtidmark run` and its binlog reader process."""

from __future__ import annotations

import logging
import sys

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(level: int | str) -> None:
    """One format on stderr; mysql-replication's own INFO chatter left out."""
    logging.basicConfig(level=level, stream=sys.stderr, format=LOG_FORMAT)
    logging.getLogger("pymysqlreplication").setLevel(logging.WARNING)
