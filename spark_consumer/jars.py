"""Offline Iceberg jars for local Spark: the runtime from its PyPI wheel plus relocated Jackson.

The wheel `snowpark-connect-deps-iceberg` ships iceberg-spark-runtime without its shaded
Jackson classes; pyspark's own Jackson 2.15.2, relocated with Debian's jarjar to
`org.apache.iceberg.shaded.com.fasterxml.jackson`, fills the gap (SPEC section 8).
`python -m spark_consumer.jars` builds it once under `.local/jars/`; reruns are no-ops.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

log = logging.getLogger(__name__)

ICEBERG_JAR = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
JACKSON_JARS = ("jackson-core-2.15.2.jar", "jackson-databind-2.15.2.jar",
                "jackson-annotations-2.15.2.jar")
RELOCATED_JAR = "iceberg-shaded-jackson-2.15.2.jar"
JARJAR_RULE = "rule com.fasterxml.jackson.** org.apache.iceberg.shaded.com.fasterxml.jackson.@1\n"
DEFAULT_JARJAR = "/usr/share/java/jarjar.jar"


class JarsError(RuntimeError):
    """A jar or tool needed for the offline classpath is missing; the message says which."""


def jars_dir() -> Path:
    """Where built jars live: $GTIDMARK_JARS_DIR, else `.local/jars` in the source tree."""
    env = os.environ.get("GTIDMARK_JARS_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / ".local" / "jars"


def iceberg_runtime_jar() -> Path:
    """The Iceberg Spark runtime jar shipped inside the snowpark-connect-deps-iceberg wheel."""
    try:
        import snowpark_connect_deps_iceberg as wheel
    except ImportError as exc:
        raise JarsError(f"snowpark-connect-deps-iceberg is not installed: {exc}") from None
    path = Path(wheel.__file__).resolve().parent / "jars" / ICEBERG_JAR
    if not path.is_file():
        raise JarsError(f"{ICEBERG_JAR} not found in {path.parent}")
    return path


def _pyspark_jars() -> Path:
    """Spark's jars/: $SPARK_HOME (set by spark-submit, pyspark may be a zip) or the wheel."""
    home = os.environ.get("SPARK_HOME")
    if home and (Path(home) / "jars").is_dir():
        return Path(home) / "jars"
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def _fingerprint(inputs: list[Path]) -> str:
    digest = hashlib.sha256(JARJAR_RULE.encode())
    for path in inputs:
        stat = path.stat()
        digest.update(f"{path.name}:{stat.st_size}".encode())
    return digest.hexdigest()[:16]


def _merge_jars(inputs: list[Path], out: Path) -> None:
    """One jar with every class of `inputs`; META-INF/versions/ and duplicates dropped."""
    seen: set[str] = set()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for path in inputs:
            with zipfile.ZipFile(path) as src:
                for info in src.infolist():
                    name = info.filename
                    if (name in seen or name.startswith("META-INF/versions/")
                            or name.endswith("module-info.class") or info.is_dir()):
                        continue
                    seen.add(name)
                    dst.writestr(name, src.read(info))


def build_relocated_jackson(target: Path, jarjar: Path) -> Path:
    """Build the relocated Jackson jar at `target` (unless up to date) and return it."""
    inputs = [_pyspark_jars() / name for name in JACKSON_JARS]
    for path in inputs:
        if not path.is_file():
            raise JarsError(f"pyspark jar missing: {path}")
    stamp = target.with_suffix(".stamp")
    fingerprint = _fingerprint(inputs)
    if target.is_file() and stamp.is_file() and stamp.read_text().strip() == fingerprint:
        return target
    if not jarjar.is_file():
        raise JarsError(f"jarjar not found at {jarjar} (Debian package libjarjar-java)")
    java = shutil.which("java")
    if java is None:
        raise JarsError("java not found on PATH (Debian package default-jre-headless)")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        merged = Path(tmp) / "jackson-merged.jar"
        rules = Path(tmp) / "rules.txt"
        out = Path(tmp) / target.name
        _merge_jars(inputs, merged)
        rules.write_text(JARJAR_RULE)
        proc = subprocess.run([java, "-jar", str(jarjar), "process", str(rules), str(merged),
                               str(out)], capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not out.is_file():
            raise JarsError(f"jarjar failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
        os.replace(out, target)
    stamp.write_text(fingerprint + "\n")
    return target


def ensure_jars(jarjar: Path | None = None) -> list[Path]:
    """Build what is missing and return the local classpath jars (Iceberg runtime first)."""
    tool = jarjar or Path(os.environ.get("GTIDMARK_JARJAR", DEFAULT_JARJAR))
    runtime = iceberg_runtime_jar()
    relocated = build_relocated_jackson(jars_dir() / RELOCATED_JAR, tool)
    return [runtime, relocated]


def jar_paths() -> list[str]:
    """Absolute paths of the jars a local session needs (`spark.jars`), built if missing."""
    return [str(p) for p in ensure_jars()]


def main() -> int:
    """`python -m spark_consumer.jars`: build the jars and print their paths."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
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
