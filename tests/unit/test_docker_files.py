"""docker/ can't run here (no Docker engine), so check what can be checked without one.

Compose files parse, every file they and the Dockerfiles reference exists, the connector
configs load with the real config loader, and the commands parse with the real CLIs.
"""

from __future__ import annotations

import logging
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from connector.cli import build_parser
from connector.flavours import flavour_named
from connector.preflight import ServerSettings, server_problem
from connector.settings.model import ConnectorConfig
from connector.settings.parse import load_config
from spark_consumer.job.options import parse_options

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
COMPOSE_FILES = sorted(DOCKER.glob("compose*.yaml"))
# compose file -> (connector config it mounts, database flavour it runs)
STACKS = {"compose.yaml": ("connector.json", "mysql"),
          "compose.mariadb.yaml": ("connector.mariadb.json", "mariadb")}
CONNECTOR_CLASSES = {"mysql": "io.debezium.connector.mysql.MySqlConnector",
                     "mariadb": "io.debezium.connector.mariadb.MariaDbConnector"}
CONFIG_IN_CONTAINER = "/etc/gtidmark/connector.json"


def compose(name: str) -> dict[str, Any]:
    data = yaml.safe_load((DOCKER / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{name}: top level is not a mapping"
    return data


def service_args(service: dict[str, Any]) -> list[str]:
    command = service.get("command", [])
    return shlex.split(command) if isinstance(command, str) else [str(c) for c in command]


def bind_mounts(service: dict[str, Any]) -> list[tuple[str, str]]:
    """(host source, container target) of the short-syntax bind mounts (not named volumes)."""
    out = []
    for volume in service.get("volumes", []):
        source, target = str(volume).split(":")[:2]
        if source.startswith((".", "/")):
            out.append((source, target))
    return out


def server_variables(args: list[str]) -> dict[str, str]:
    """The global variables a server's command line sets (`--log-bin=NAME` turns log_bin ON)."""
    variables = {}
    for arg in args:
        if arg.startswith("--"):
            name, _, value = arg[2:].partition("=")
            variables[name.replace("-", "_")] = value
    if "log_bin" in variables:
        variables["log_bin"] = "ON"
    return variables


def mounted_config(name: str) -> ConnectorConfig:
    mounts = {t: s for s, t in bind_mounts(compose(name)["services"]["connector"])}
    return load_config(DOCKER / mounts[CONFIG_IN_CONTAINER])


def test_every_compose_file_is_valid_yaml_with_the_expected_services() -> None:
    assert {p.name for p in COMPOSE_FILES} == set(STACKS)
    for path in COMPOSE_FILES:
        services = compose(path.name)["services"]
        assert {"primary", "replica", "kafka", "connector", "spark"} <= set(services), path.name
        assert services["spark"].get("profiles") == ["spark"], path.name


@pytest.mark.parametrize("name", sorted(STACKS))
def test_compose_services_reference_files_that_exist(name: str) -> None:
    data = compose(name)
    named_volumes = set(data.get("volumes") or {})
    for service_name, service in data["services"].items():
        build = service.get("build")
        if build is not None:
            context = (DOCKER / build["context"]).resolve()
            assert context == REPO, f"{service_name}: build context is not the repository root"
            assert (context / build["dockerfile"]).is_file(), f"{service_name}: no Dockerfile"
        for source, _ in bind_mounts(service):
            assert (DOCKER / source).is_file(), f"{name}: {service_name} mounts missing {source}"
        for volume in service.get("volumes", []):
            source = str(volume).split(":")[0]
            if not source.startswith((".", "/")):
                assert source in named_volumes, f"{service_name}: volume {source} not declared"
        for dependency in service.get("depends_on", {}):
            assert dependency in data["services"], f"{service_name}: depends on {dependency}"


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "Dockerfile.spark"])
def test_dockerfile_copies_exist_and_pass_the_dockerignore(dockerfile: str) -> None:
    text = (DOCKER / dockerfile).read_text(encoding="utf-8")
    # COPY --from=<stage> copies from a build stage, not from the build context
    sources = [src for line in re.findall(r"^COPY\s+(?!--from=)(.+)$", text, re.MULTILINE)
               for src in line.split()[:-1] if not src.startswith("--")]
    for stage in re.findall(r"^COPY\s+--from=(\S+)", text, re.MULTILINE):
        assert re.search(rf"^FROM\s+\S+\s+AS\s+{stage}$", text, re.MULTILINE), \
            f"{dockerfile}: COPY --from={stage}: no such build stage"
    assert sources, "no COPY lines found"
    allowed = {line[1:].rstrip("/") for line in
               (DOCKER / f"{dockerfile}.dockerignore").read_text().splitlines()
               if line.startswith("!")}
    for src in sources:
        assert (REPO / src).exists(), f"{dockerfile}: COPY {src} does not exist"
        assert any(src.rstrip("/") == a or src.startswith(f"{a}/") for a in allowed), \
            f"{dockerfile}: {src} is excluded by its .dockerignore"
    # The connector image wraps gtidmark (test_docker_health.py); the Spark image runs it.
    if dockerfile == "Dockerfile":  # the compiled module is built in the image, not copied
        assert "cargo build --release --locked" in text and \
            "COPY --from=native /out/ connector/" in text
    entrypoint = {"Dockerfile": "gtidmark-entrypoint", "Dockerfile.spark": "gtidmark"}
    assert f'ENTRYPOINT ["{entrypoint[dockerfile]}"]' in text


@pytest.mark.parametrize("name", sorted(STACKS))
def test_connector_config_loads_and_points_at_the_compose_services(
        name: str, caplog: pytest.LogCaptureFixture) -> None:
    expected_config, flavour = STACKS[name]
    services = compose(name)["services"]
    with caplog.at_level(logging.WARNING, logger="connector.settings"):
        config = mounted_config(name)
    assert not caplog.records, f"unknown keys: {[r.getMessage() for r in caplog.records]}"
    assert config == load_config(DOCKER / expected_config)
    assert config.flavour == flavour and config.connector_class == CONNECTOR_CLASSES[flavour]
    assert config.hostname == "replica" and config.user == "cdc" and config.read_only
    for servers in (config.bootstrap_servers, config.signal_bootstrap_servers or ""):
        host, port = servers.split(":")
        assert host == "kafka" and port == "9092"
    assert "INTERNAL://kafka:9092" in services["kafka"]["environment"]["KAFKA_ADVERTISED_LISTENERS"]
    command = service_args(services["connector"])
    args = build_parser().parse_args(command)
    assert (args.command, args.config) == ("run", CONFIG_IN_CONTAINER)


@pytest.mark.parametrize("name", sorted(STACKS))
def test_server_ids_differ_and_the_replica_is_a_read_only_gtid_replica(name: str) -> None:
    services = compose(name)["services"]
    primary, replica = service_args(services["primary"]), service_args(services["replica"])
    ids = {int(a.split("=")[1]) for a in primary + replica if a.startswith("--server-id=")}
    ids.add(mounted_config(name).server_id)
    assert len(ids) == 3, "primary, replica and connector need distinct server ids"
    for args in (primary, replica):
        assert "--binlog-row-image=FULL" in args and "--binlog-row-metadata=FULL" in args
    assert "--read-only=ON" in replica
    init = {t: (DOCKER / s).read_text() for s, t in bind_mounts(services["replica"])
            if t.startswith("/docker-entrypoint-initdb.d/")}
    replica_sql = " ".join(" ".join(init.values()).split())
    primary_sql = " ".join(" ".join((DOCKER / s).read_text() for s, _ in
                                    bind_mounts(services["primary"])).split())
    assert "GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'cdc'@'%'" in primary_sql
    assert primary_sql.count("TO 'cdc'@'%'") == 1, "the cdc user gets those three privileges only"
    assert "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'" in primary_sql
    if STACKS[name][1] == "mariadb":
        assert {"--gtid-strict-mode=ON", "--log-slave-updates=ON"} <= set(replica)
        assert "MASTER_HOST = 'primary'" in replica_sql
        assert "MASTER_USE_GTID = slave_pos" in replica_sql and "START SLAVE" in replica_sql
    else:
        for args in (primary, replica):
            assert {"--gtid-mode=ON", "--enforce-gtid-consistency=ON"} <= set(args)
        assert "--log-replica-updates=ON" in replica
        assert "SOURCE_HOST = 'primary'" in replica_sql
        assert "SOURCE_AUTO_POSITION = 1" in replica_sql and "START REPLICA" in replica_sql
        assert "SET PERSIST super_read_only = ON" in replica_sql


@pytest.mark.parametrize("name", sorted(STACKS))
def test_spark_command_parses_and_its_pattern_matches_only_the_change_topics(name: str) -> None:
    services = compose(name)["services"]
    command = service_args(services["spark"])
    assert command[0] == "spark-apply"
    opts = parse_options(command[1:])
    assert opts.bootstrap_servers == "kafka:9092" and opts.trigger_interval == 30
    assert opts.packages == ["org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.2"]
    assert not opts.local_jars
    assert "warehouse:/warehouse" in services["spark"]["volumes"]
    config = mounted_config(name)
    pattern = re.compile(opts.topic_pattern or "")
    assert pattern.fullmatch(f"{config.topic_prefix}.shop.orders")
    for topic in (config.signal_kafka_topic, config.offsets_topic, config.history_topic,
                  config.heartbeat_topic, config.transaction_topic, config.topic_prefix):
        assert not pattern.fullmatch(topic), topic


@pytest.mark.parametrize("name", sorted(STACKS))
def test_both_servers_pass_the_connectors_start_up_check(name: str) -> None:
    """Every setting the flavour's preflight requires is stated on the server's command line
    (none left to a default that could change) with the value the connector needs."""
    flavour = flavour_named(STACKS[name][1])
    services = compose(name)["services"]
    for service, replica in (("primary", False), ("replica", True)):
        variables = server_variables(service_args(services[service]))
        problem = server_problem(ServerSettings(variables, flavour, replica))
        assert problem is None, f"{name} {service}: {problem}"
    if flavour.name == "mysql":
        # MySQL 8.4 applies with 4 workers by default: stated, so the commit-order check runs.
        applier = server_variables(service_args(services["replica"]))
        assert int(applier["replica_parallel_workers"]) > 1
        assert applier["replica_preserve_commit_order"] == "ON"


def test_the_docker_readme_lists_both_stacks_as_supported() -> None:
    readme = (DOCKER / "README.md").read_text(encoding="utf-8")
    for name, (config, _) in STACKS.items():
        assert f"`{name}`" in readme and f"`{config}`" in readme
    assert "not wired" not in readme and "will not stream" not in readme
    for path in COMPOSE_FILES:
        assert "binlog reader lands" not in path.read_text(encoding="utf-8"), path.name
