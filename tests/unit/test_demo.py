"""`make demo [FLAVOUR=mysql]` without running it: the flavour reaches the demo, and what the
demo builds for each flavour is what that flavour's server and connector accept.

Running the demo end to end takes a minute per flavour (its README section says so); these
checks catch the flavour plumbing without services.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from connector.demo import parse_args
from connector.demo_sources import (
    CONNECTOR_CLASSES,
    FLAVOURS,
    ROWS,
    SCHEMA,
    connector_document,
)
from connector.flavours import flavour_named
from connector.settings.parse import parse_config

REPO = Path(__file__).resolve().parents[2]
CDC = {"host": "127.0.0.1", "port": 3307, "user": "cdc", "password": "pw"}


def test_makefile_passes_the_flavour_with_mariadb_by_default() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^FLAVOUR \?= mariadb$", makefile, re.MULTILINE)
    assert "-m connector.demo --flavour $(FLAVOUR)" in makefile
    assert parse_args([]).flavour == "mariadb"
    assert parse_args(["--flavour", "mysql"]).flavour == "mysql"


def test_an_unknown_flavour_exits_2_before_anything_starts() -> None:
    with pytest.raises(SystemExit) as stopped:
        parse_args(["--flavour", "oracle"])
    assert stopped.value.code == 2


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_the_connector_document_is_a_valid_config_of_that_flavour(flavour: str) -> None:
    config = parse_config(connector_document(flavour, "demo", CDC, "127.0.0.1:9092"))
    assert config.connector_class == CONNECTOR_CLASSES[flavour]
    assert config.flavour == flavour
    assert (config.hostname, config.port, config.read_only) == ("127.0.0.1", 3307, True)
    assert config.snapshot_mode == "no_data"


def test_positions_of_both_flavours_compare() -> None:
    maria = flavour_named("mariadb")
    assert maria.position("0-1-985").covers(maria.position("0-1-9"))
    mysql = flavour_named("mysql")
    uuid = "59524187-e90a-11f1-94f2-02fc00000001"
    assert mysql.position(f"{uuid}:1-986").covers(mysql.position(f"{uuid}:1-9"))
    assert not mysql.position(f"{uuid}:1-9").covers(mysql.position(f"{uuid}:1-986"))


def test_the_sample_sql_needs_no_mariadb_only_feature() -> None:
    """No SEQUENCE engine table (rows come from insert_sequence) and no MariaDB syntax."""
    statements = [*SCHEMA, *(select for _, select in ROWS.values())]
    for sql in statements:
        assert not re.search(r"seq_\d+_to_", sql), sql
        assert not re.search(r"\b(RETURNING|SEQUENCE|SET STATEMENT)\b", sql, re.IGNORECASE), sql
    assert all(select.startswith("seq, ") for _, select in ROWS.values())
