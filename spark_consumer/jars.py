"""The job's jars for a local or submitted Spark: Spark's Kafka source and Iceberg's runtime.

`make setup` copies them and their dependencies from Maven Central with
`scripts/maven-jars spark-MAJOR.MINOR` (the pom names the coordinates) into
`.local/maven/spark-MAJOR.MINOR/`; `python -m spark_consumer.jars` prints their paths,
`python -m spark_consumer.jars --packages` the coordinates for `spark-submit --packages`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# The Spark lines the job runs on and what `--packages` takes for each: the coordinates
# scripts/maven/spark-LINE.xml names (tests/unit/test_spark_jars.py holds them equal).
PACKAGES = {
    "3.5": ("org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.2",
            "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.7"),
    "4.1": ("org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0",
            "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.1"),
}


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


def packages() -> str:
    """`spark-submit --packages` for the installed pyspark's line (comma-separated)."""
    line = spark_line()
    if line not in PACKAGES:
        raise JarsError(f"Spark {line} is not supported (supported: {', '.join(PACKAGES)})")
    return ",".join(PACKAGES[line])


def main(argv: list[str]) -> int:
    """`python -m spark_consumer.jars [--packages]`: the jars' paths, one a line, or the
    coordinates of `--packages`."""
    if argv not in ([], ["--packages"]):
        print("usage: python -m spark_consumer.jars [--packages]", file=sys.stderr)
        return 2
    try:
        if argv:
            print(packages())
            return 0
        paths = jar_paths()
    except JarsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
