"""`gtidmark spark-apply`, `python -m spark_consumer` and spark-submit: arguments, Spark, and
the loop of micro-batches (`Job`) until --once has caught up or a SIGTERM arrives.

Exit codes: 0 ok, 1 runtime failure, 2 bad arguments.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from types import FrameType

from spark_consumer.decoding.flattened import FlattenedTopicError
from spark_consumer.iceberg.layout import LayoutError
from spark_consumer.iceberg.maintenance import Maintenance
from spark_consumer.job.batch import Job
from spark_consumer.job.options import UsageError, parse_options
from spark_consumer.job.secrets import install as install_redaction
from spark_consumer.job.secrets import secret_values
from spark_consumer.reading.planner import TP
from spark_consumer.reading.resume import TableCollisionError

log = logging.getLogger("spark_consumer")

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2


_stop = False


def _on_signal(signum: int, frame: FrameType | None) -> None:
    global _stop
    _stop = True
    log.info("signal %d: stopping after the current batch", signum)


def run(job: Job) -> None:
    """--once: batches until the ends seen at start are applied; else forever on a trigger."""
    targets: dict[TP, int] | None = None
    maintenance = Maintenance(job.spark, job.opts.maintenance)
    while not _stop:
        started = time.monotonic()
        ranges, ends = job.plan(targets)
        if job.opts.once and targets is None:
            targets = ends
        if any(r.size for r in ranges):
            for line in job.run_batch(ranges, ends).lines(job.batches):
                log.info(line)
        elif job.opts.once:
            log.info("caught up: %d batches, %d dead-lettered records", job.batches,
                     job.dead_letters)
            return
        maintenance.run_if_due(job.batches, job.tables)  # between batches: no race
        if not job.opts.once:
            time.sleep(max(0.0, job.opts.trigger_interval - (time.monotonic() - started)))


def main(argv: list[str]) -> int:
    """Parse arguments, start Spark, run the loop; 2 on bad arguments, 1 on failure."""
    try:
        opts = parse_options(list(argv))
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if os.environ.get("PYSPARK_PIN_THREAD", "true").lower() != "true":
        # The offsets ride in the MERGE's commit through a per-JVM-thread setting.
        print("error: PYSPARK_PIN_THREAD=false: the job needs each Python thread pinned to "
              "one JVM thread (PySpark's default) to commit offsets with its MERGE; unset it",
              file=sys.stderr)
        return EXIT_USAGE
    logging.basicConfig(level=opts.log_level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    redactor = install_redaction(secret_values(opts.catalog_conf, opts.kafka_conf,
                                               opts.spark_conf))
    from connector.kafka.reach import KafkaUnreachable, require_kafka

    try:  # before Spark starts: a broker that is not there is one line, not a 30 s wait
        require_kafka(opts.kafka_settings(), opts.bootstrap_setting())
    except KafkaUnreachable as exc:
        print(f"error: {redactor.redact(str(exc))}", file=sys.stderr)
        return EXIT_RUNTIME
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    signal.signal(signal.SIGTERM, _on_signal)
    from spark_consumer.job.session import build_session

    try:
        spark = build_session(opts)
        run(Job(spark, opts))
    except KeyboardInterrupt:
        return EXIT_OK
    except (TableCollisionError, LayoutError, FlattenedTopicError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:
        log.debug("failure", exc_info=True)
        first = (str(exc).strip().splitlines() or ["(no message)"])[0]
        print(f"error: spark-apply failed: {type(exc).__name__}: {redactor.redact(first)}",
              file=sys.stderr)
        return EXIT_RUNTIME
    return EXIT_OK
