"""`python -m spark_consumer.package DIR`: what spark-submit ships to a cluster's executors.

Executors run the job's decoding and Kafka reads in their own Python, which has none of
the project: DIR gets the code as one zip for `--py-files`, the pinned requirements of the
executors' Python (the driver's own versions) and the entry script spark-submit runs.
"""

from __future__ import annotations

import sys
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

CODE_ZIP = "gtidmark-spark.zip"
REQUIREMENTS = "executor-requirements.txt"
ENTRY_SCRIPT = "spark_apply.py"
# The project's packages (as the wheel has them): the driver imports the zip's copy too.
PACKAGES = ("connector", "signals", "spark_consumer")
# What the executors' tasks import beyond the zip and the pyspark Spark puts on
# their path: Arrow batches, Kafka reads, JSON decoding.
EXECUTOR_DISTRIBUTIONS = ("pyarrow", "confluent-kafka", "orjson")
ENTRY = ('"""spark-submit entry point of `gtidmark spark-apply` (written by '
         'python -m spark_consumer.package)."""\n\nimport sys\n\n'
         'from spark_consumer.job.main import main\n\n'
         'if __name__ == "__main__":\n    sys.exit(main(sys.argv[1:]))\n')


def source_root() -> Path:
    """The directory holding the project's packages (a source tree or site-packages)."""
    return Path(__file__).resolve().parent.parent


def write_code_zip(out: Path) -> int:
    """Zip every .py file of PACKAGES, in a stable order; returns the number of files."""
    root = source_root()
    files = sorted(p for name in PACKAGES for p in (root / name).rglob("*.py")
                   if "__pycache__" not in p.parts)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for path in files:
            dst.write(path, path.relative_to(root).as_posix())
    return len(files)


def requirement_lines() -> list[str]:
    """`name==version` of EXECUTOR_DISTRIBUTIONS as installed here, the driver's Python."""
    lines = []
    for dist in EXECUTOR_DISTRIBUTIONS:
        try:
            lines.append(f"{dist}=={version(dist)}")
        except PackageNotFoundError:
            raise SystemExit(f"error: {dist} is not installed here; install gtidmark[spark] "
                             "first") from None
    return lines


def build(directory: Path) -> list[Path]:
    """Write the zip, the requirements and the entry script into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    code, reqs, entry = directory / CODE_ZIP, directory / REQUIREMENTS, directory / ENTRY_SCRIPT
    write_code_zip(code)
    reqs.write_text("\n".join(requirement_lines()) + "\n", encoding="utf-8")
    entry.write_text(ENTRY, encoding="utf-8")
    return [code, reqs, entry]


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: python -m spark_consumer.package DIR", file=sys.stderr)
        return 2
    for path in build(Path(argv[0])):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
