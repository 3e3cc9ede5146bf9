"""The job's `--packages` coordinates per Spark line are what `make setup` fetches with Maven.

The poms (scripts/maven/spark-LINE.xml) and spark_consumer.jars.PACKAGES name them twice: the
poms for `make setup`, PACKAGES for the job's messages and `python -m spark_consumer.jars
--packages`; a version bumped in one and not the other would submit other jars than tested.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from spark_consumer.jars import PACKAGES

MAVEN = Path(__file__).resolve().parents[2] / "scripts" / "maven"
NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def pom_coordinates(pom: Path) -> set[str]:
    root = ET.parse(pom).getroot()
    return {":".join(dep.findtext(f"m:{part}", "", NS)
                     for part in ("groupId", "artifactId", "version"))
            for dep in root.findall("m:dependencies/m:dependency", NS)}


def test_every_spark_line_has_a_pom_and_packages_names_its_coordinates() -> None:
    lines = {pom.stem.removeprefix("spark-") for pom in MAVEN.glob("spark-*.xml")}
    assert lines == set(PACKAGES) == {"3.5", "4.1"}
    for line, coordinates in PACKAGES.items():
        assert set(coordinates) == pom_coordinates(MAVEN / f"spark-{line}.xml"), line


def test_packages_are_built_for_the_lines_scala() -> None:
    """Spark 3.5's jars are Scala 2.12 builds, Spark 4's Scala 2.13 ones."""
    for line, coordinates in PACKAGES.items():
        scala = "2.12" if line.startswith("3.") else "2.13"
        for coordinate in coordinates:
            artifact = coordinate.split(":")[1]
            assert artifact.endswith(f"_{scala}"), coordinate
            if "iceberg-spark-runtime" in artifact:
                assert artifact.startswith(f"iceberg-spark-runtime-{line}_"), coordinate
