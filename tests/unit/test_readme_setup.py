"""The README's ready-to-paste `my.cnf` blocks and GRANTs pass the connector's own start-up
check, so a newcomer who pastes them is not refused (and a new requirement in
connector/flavours.py fails here until the README states it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from connector.flavours import flavour_named
from connector.preflight import ServerSettings, cnf_block, server_problem

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
INI_BLOCKS = re.findall(r"```ini\n(.*?)```", README, re.DOTALL)
SQL_BLOCKS = re.findall(r"```sql\n(.*?)```", README, re.DOTALL)
GROUPS = {"[mysqld]": "mysql", "[mariadb]": "mariadb"}
REPLICA_ONLY = "# replica only:"


def ini_variables(lines: list[str]) -> dict[str, str]:
    """`key = value  # why` lines as the server reads them (quotes and comments dropped)."""
    variables = {}
    for line in lines:
        text = line.split("#", 1)[0].strip()
        if "=" in text:
            key, value = (part.strip() for part in text.split("=", 1))
            variables[key] = value.strip("\"'")
    if variables.get("log_bin"):
        variables["log_bin"] = "ON"
    return variables


def blocks() -> dict[str, tuple[list[str], list[str]]]:
    """flavour -> (lines for every server, lines for the replica only)."""
    out = {}
    for block in INI_BLOCKS:
        lines = block.splitlines()
        if lines and lines[0] in GROUPS:
            split = lines.index(REPLICA_ONLY)
            out[GROUPS[lines[0]]] = (lines[1:split], lines[split + 1:])
    return out


def test_there_is_one_block_and_one_grant_per_flavour() -> None:
    assert set(blocks()) == {"mysql", "mariadb"}
    grants = [sql for sql in SQL_BLOCKS
              if "GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'cdc'@'%';" in sql]
    assert len(grants) == 2
    for sql in grants:
        assert sql.count("GRANT") == 1, "the cdc user gets those three privileges only"


@pytest.mark.parametrize("flavour", ["mysql", "mariadb"])
def test_the_block_passes_the_start_up_check_on_a_primary_and_on_a_replica(flavour: str) -> None:
    common, replica_only = blocks()[flavour]
    checks = flavour_named(flavour)
    primary = ini_variables(common)
    assert server_problem(ServerSettings(primary, checks, replica=False)) is None
    assert "read_only" not in primary, "read_only belongs to the replica only"
    replica = ini_variables(common + replica_only)
    assert server_problem(ServerSettings(replica, checks, replica=True)) is None
    assert replica["read_only"] == "ON"
    for line in common + replica_only:
        if "=" in line:
            assert re.search(r"#\s*\S", line), f"no one-line why: {line!r}"


def raw_lines(lines: list[str]) -> dict[str, str]:
    """`key = value` lines as written (comments dropped, quotes kept)."""
    return {key.strip(): value.split("#", 1)[0].strip() for key, _, value in
            (line.partition("=") for line in lines if "=" in line and not line.startswith("#"))}


@pytest.mark.parametrize("flavour", ["mysql", "mariadb"])
def test_the_block_preflight_prints_is_the_readmes(flavour: str) -> None:
    """With every required variable wrong, the start-up check prints its my.cnf block: each
    of its lines is the README's line for that variable, value for value."""
    checks = flavour_named(flavour)
    names = {r.name for r in checks.requirements({"replica_parallel_workers": "4"}, True)}
    wrong = {name: "WRONG" for name in names} | {"replica_parallel_workers": "4"}
    block = cnf_block(ServerSettings(wrong, checks, replica=True))
    assert block[0] == ("[mysqld]" if flavour == "mysql" else "[mariadb]")
    common, replica_only = blocks()[flavour]
    readme = raw_lines(common + replica_only)
    printed = raw_lines(block[1:])
    assert set(printed) == names
    assert {name: readme[name] for name in printed} == printed
