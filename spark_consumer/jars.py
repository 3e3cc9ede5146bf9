"""The job's jars for a local or submitted Spark: Spark's Kafka source and Iceberg's runtime.

`make setup` copies them and their dependencies from Maven Central with
`scripts/maven-jars spark-MAJOR.MINOR` (the pom names the coordinates) into
`.local/maven/spark-MAJOR.MINOR/`; `python -m spark_consumer.jars` prints their paths.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


class JarsError(RuntimeError):
    """The jars for the installed Spark are not there; the message says how to get them."""


def spark_line() -> str:
    """MAJOR.MINOR of the installed pyspark: the jars are built for one Spark line."""
    import pyspark

    major, minor, *_ = pyspark.__version__.split(".")
    return f"{major}.{minor}"


def jars_dir() -> Path:
    """$GTIDMARK_SPARK_JARS, else `.local/maven/spark-MAJOR.MINOR` in the source tree."""
    env = os.environ.get("GTIDMARK_SPARK_JARS")
    if env:
        return Path(env)
    root = Path(__file__).resolve().parent.parent
    return root / ".local" / "maven" / f"spark-{spark_line()}"


def jar_paths() -> list[str]:
    """Absolute paths of the jars a session needs (`spark.jars`), Iceberg's runtime first."""
    where = jars_dir()
    jars = sorted(where.glob("*.jar"), key=lambda p: (not p.name.startswith("iceberg"), p.name))
    if not any(p.name.startswith("iceberg-spark-runtime") for p in jars) \
            or not any(p.name.startswith("spark-sql-kafka") for p in jars):
        raise JarsError(f"the Iceberg runtime and Spark's Kafka source are not in {where}: "
                        f"run `make setup` (scripts/maven-jars spark-{spark_line()})")
    return [str(p) for p in jars]


def main() -> int:
    """`python -m spark_consumer.jars`: print the jars' paths, one a line."""
    try:
        paths = jar_paths()
    except JarsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
