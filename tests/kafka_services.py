"""Apache Kafka 4.4 for the tests, the demo and the bench: KRaft nodes on free loopback ports.

`make setup` copies the broker's jars from Maven Central to `.local/maven/kafka/`
(`scripts/maven-jars kafka`). A `Broker` is a cluster of one node or more, each node both
broker and controller (KRaft combined mode), formatted with `StorageTool format` and started
as `kafka.Kafka`, as Kafka's own `bin/kafka-server-start.sh` does. The settings are those of
Kafka's shipped `config/server.properties` for the size of the cluster; its logs stay in
the node's directory for a failed run to read.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import uuid
from base64 import urlsafe_b64encode
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tests.services import ServiceError, free_port, stop_process, wait_for

ROOT = Path(__file__).resolve().parent.parent
KAFKA_VERSION = "4.4.0"
JVM_OPTIONS = ["-Xms256m", "-Xmx1g", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
               "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
               "-Djava.awt.headless=true"]
LOG4J2 = """\
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.state.name = state.change.logger
logger.state.level = WARN
"""


def kafka_libs() -> Path:
    """The broker's jars: $GTIDMARK_KAFKA_LIBS, else what `make setup` fetched."""
    libs = Path(os.environ.get("GTIDMARK_KAFKA_LIBS", ROOT / ".local" / "maven" / "kafka"))
    if not any(libs.glob("kafka_2.13-*.jar")):
        raise ServiceError(f"Apache Kafka's jars are missing in {libs} (run `make setup`)")
    return libs


def new_cluster_id() -> str:
    """A random cluster id as Kafka's `Uuid.randomUuid()` makes one: URL-safe base64 of 16
    bytes, never starting with '-' (StorageTool's argument parser took one that did for an
    option: one cluster start in 64 failed)."""
    while True:
        text = urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    path = Path(home) / "bin" / "java" if home else shutil.which("java")
    if path is None:
        raise ServiceError("java not found (run `make setup`)")
    return str(path)


@dataclass
class KafkaNode:
    """One KRaft process, broker and controller: its own directory, ports and log."""

    base: Path
    node_id: int
    port: int = field(default_factory=free_port)
    controller_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def home(self) -> Path:
        return self.base / f"kafka{self.node_id}"

    @property
    def log(self) -> Path:
        return self.home / "server.log"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def configure(self, voters: str, size: int) -> None:
        """server.properties as Kafka ships it, replication sized to the cluster."""
        replicas, min_isr = (1, 1) if size == 1 else (3, 2)
        settings = {
            "process.roles": "broker,controller",
            "node.id": self.node_id,
            "controller.quorum.voters": voters,
            "listeners": f"PLAINTEXT://{self.address},CONTROLLER://127.0.0.1:"
                         f"{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://{self.address}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": self.home / "data",
            "num.partitions": 1,
            "default.replication.factor": replicas,
            "min.insync.replicas": min_isr,
            "offsets.topic.replication.factor": replicas,
            "transaction.state.log.replication.factor": replicas,
            "transaction.state.log.min.isr": min_isr,
            "share.coordinator.state.topic.replication.factor": replicas,
            "share.coordinator.state.topic.min.isr": min_isr,
            # Kafka's shipped server.properties: no initial rebalance delay, for development.
            "group.initial.rebalance.delay.ms": 0,
        }
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "server.properties").write_text(
            "".join(f"{k}={v}\n" for k, v in settings.items()))
        (self.home / "log4j2.properties").write_text(LOG4J2.format(log=self.log))

    def _java(self, main: str, *args: str) -> list[str]:
        return [java(), *JVM_OPTIONS, f"-Dlog4j2.configurationFile={self.home / 'log4j2.properties'}",
                "-cp", f"{kafka_libs()}/*", main, *args]

    def format(self, cluster_id: str) -> None:
        if (self.home / "data" / "meta.properties").exists():
            return
        out = subprocess.run(self._java("kafka.tools.StorageTool", "format", "-t", cluster_id,
                                        "-c", str(self.home / "server.properties")),
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise ServiceError(f"kafka storage format failed for node {self.node_id}: "
                               f"{(out.stdout + out.stderr)[-800:]}")

    def start(self) -> None:
        with open(self.home / "stdout.log", "ab") as out:
            self.proc = subprocess.Popen(
                self._java("kafka.Kafka", str(self.home / "server.properties")),
                stdout=out, stderr=subprocess.STDOUT)

    def alive(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            tail = self.log.read_text(errors="replace")[-800:] if self.log.exists() else ""
            raise ServiceError(f"kafka node {self.node_id} exited with {self.proc.returncode}; "
                               f"log {self.log}: {tail}")
        return self.proc is not None

    def pause(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        stop_process(self.proc, timeout=30)


@dataclass
class Broker:
    """An Apache Kafka cluster of `size` KRaft nodes (one by default). Pause it with SIGSTOP
    to simulate an outage; `nodes` gives one node to kill or pause on its own."""

    base: Path
    size: int = 1
    nodes: list[KafkaNode] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.nodes:
            self.nodes = [KafkaNode(self.base, n) for n in range(1, self.size + 1)]

    @property
    def bootstrap(self) -> str:
        return ",".join(node.address for node in self.nodes)

    @property
    def proc(self) -> subprocess.Popen[bytes] | None:
        """The first node's process (the only one in a single-node cluster)."""
        return self.nodes[0].proc

    @property
    def log(self) -> Path:
        return self.nodes[0].log

    def start(self) -> None:
        voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.nodes)
        cluster_id = new_cluster_id()
        for node in self.nodes:
            node.configure(voters, self.size)
        with ThreadPoolExecutor(len(self.nodes)) as pool:
            list(pool.map(lambda n: n.format(cluster_id), self.nodes))
        for node in self.nodes:
            node.start()
        self.wait_ready()

    def wait_ready(self, timeout: float = 90) -> None:
        """Until every node runs and the metadata lists all of them as brokers."""
        wait_for(self._ready, timeout, f"Apache Kafka ({self.size} node(s)) to register its "
                 "brokers")

    def _ready(self) -> bool:
        from confluent_kafka.admin import AdminClient

        for node in self.nodes:
            node.alive()
            # A closed port first: librdkafka would log every refused connection.
            socket.create_connection(("127.0.0.1", node.port), timeout=1).close()
        meta = AdminClient({"bootstrap.servers": self.bootstrap}).list_topics(timeout=2)
        return len(meta.brokers) == len(self.nodes)

    def start_again(self) -> None:
        """Start the nodes of a stopped cluster on their data and ports."""
        for node in self.nodes:
            node.start()
        self.wait_ready()

    def pause(self) -> None:
        for node in self.nodes:
            node.pause()

    def resume(self) -> None:
        for node in self.nodes:
            node.resume()

    def stop(self) -> None:
        for node in self.nodes:
            node.resume()
        with ThreadPoolExecutor(len(self.nodes)) as pool:
            list(pool.map(lambda n: n.stop(), self.nodes))
