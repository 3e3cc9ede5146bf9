"""The connector's settings under Debezium's MySQL property names: the pydantic model.

parse.py turns a Kafka Connect JSON file into a `ConnectorConfig`; the model's validators
check each value, and its properties derive what the rest of the connector reads.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from connector.kafka.client_log import KAFKA_LOG
from connector.kafka.topic_creation import TopicCreation
from connector.settings import covered
from connector.settings.smt import UnwrapSettings, unwrap_settings
from connector.settings.snapshot_mode import ConfigurationBased, resolve
from connector.settings.tls import mysql_ssl

MAX_CHUNK_SIZE = 100_000  # incremental.snapshot.chunk.size; a signal's chunk-size too
MAX_CHUNK_DELAY_MS = 60_000
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
AVRO_CONVERTER = "io.confluent.connect.avro.AvroConverter"
CONVERTERS = (JSON_CONVERTER, AVRO_CONVERTER)
# The signal channels read here: the signal topic, and the signal table from the binlog.
READ_CHANNELS = ("kafka", "source")
# Debezium's other signal channels, and why each is not read here.
SIGNAL_CHANNELS = {
    "file": "(a file Debezium polls) is not read",
    "jmx": "(a JMX operation) is not read: gtidmark has no JVM",
    "in-process": "(Debezium Engine's in-process API) is not read",
}
MESSAGE_KEY_PART = re.compile(r"^\s*([^:]+):([^:,]+(,[^:,]+)*)\s*$")


def _split_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [part.strip() for part in str(value).split(",") if part.strip()]


class ConnectorConfig(BaseModel):
    """The settings gtidmark understands, by their Debezium names (aliases)."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    name: str
    connector_class: str = Field("io.debezium.connector.mysql.MySqlConnector", alias="connector.class")
    hostname: str = Field(alias="database.hostname")
    port: int = Field(3306, alias="database.port", ge=1, le=65535)
    user: str = Field(alias="database.user")
    password: str = Field("", alias="database.password", repr=False)
    server_id: int = Field(alias="database.server.id", ge=1, le=4294967295)
    ssl_mode: Literal["disabled", "preferred", "required", "verify_ca", "verify_identity"] = Field(
        "preferred", alias="database.ssl.mode"
    )
    ssl_ca: str | None = Field(None, alias="database.ssl.ca")
    topic_prefix: str = Field(alias="topic.prefix", min_length=1)
    database_include_list: list[str] = Field(default_factory=list, alias="database.include.list")
    database_exclude_list: list[str] = Field(default_factory=list, alias="database.exclude.list")
    table_include_list: list[str] = Field(default_factory=list, alias="table.include.list")
    table_exclude_list: list[str] = Field(default_factory=list, alias="table.exclude.list")
    column_exclude_list: list[str] = Field(default_factory=list, alias="column.exclude.list")
    column_include_list: list[str] = Field(default_factory=list, alias="column.include.list")
    message_key_columns: str | None = Field(None, alias="message.key.columns")
    skipped_operations: frozenset[str] = Field(frozenset({"t"}), alias="skipped.operations")
    propagate_source_type: list[str] = Field(default_factory=list,
                                             alias="column.propagate.source.type")
    propagate_datatype: list[str] = Field(default_factory=list,
                                          alias="datatype.propagate.source.type")
    # column.mask.* / column.truncate.* keys with their values, in the file's order.
    column_mappers: dict[str, str] = Field(default_factory=dict)
    # transforms and transforms.* keys as given (keys.py decides which are honoured).
    transform_settings: dict[str, str] = Field(default_factory=dict)
    # Either value gives the same records here (covered.py); kept to show the file as given.
    read_only: bool = Field(True, alias="read.only")
    # Read before snapshot.mode (declared first), which they decide when configuration_based.
    based_snapshot_data: bool = Field(
        False, alias="snapshot.mode.configuration.based.snapshot.data")
    based_start_stream: bool = Field(
        False, alias="snapshot.mode.configuration.based.start.stream")
    based_snapshot_on_data_error: bool = Field(
        False, alias="snapshot.mode.configuration.based.snapshot.on.data.error")
    snapshot_mode: Literal["initial", "no_data", "never", "always", "when_needed"] = Field(
        "initial", alias="snapshot.mode")
    allow_schema_changes: bool = Field(True, alias="incremental.snapshot.allow.schema.changes")
    chunk_size: int = Field(1024, alias="incremental.snapshot.chunk.size", ge=1,
                            le=MAX_CHUNK_SIZE)
    chunk_delay_ms: int = Field(0, alias="incremental.snapshot.chunk.delay.ms", ge=0,
                                le=MAX_CHUNK_DELAY_MS)
    # Debezium's signal table, db.table: read from the binlog when channels have source
    # (declared first: the channels' check reads it).
    signal_data_collection: str | None = Field(None, alias="signal.data.collection")
    # Debezium's default is source (the signal table); gtidmark's is kafka, the signal topic.
    signal_channels: frozenset[str] = Field(frozenset({"kafka"}),
                                            alias="signal.enabled.channels")
    signal_topic: str | None = Field(None, alias="signal.kafka.topic")
    signal_bootstrap_servers: str | None = Field(None, alias="signal.kafka.bootstrap.servers")
    heartbeat_interval_ms: int = Field(0, alias="heartbeat.interval.ms", ge=0)
    tombstones_on_delete: bool = Field(True, alias="tombstones.on.delete")
    decimal_handling_mode: Literal["precise", "string", "double"] = Field(
        "precise", alias="decimal.handling.mode"
    )
    time_precision_mode: Literal["adaptive_time_microseconds", "connect"] = Field(
        "adaptive_time_microseconds", alias="time.precision.mode"
    )
    provide_transaction_metadata: bool = Field(False, alias="provide.transaction.metadata")
    key_converter: str = Field(JSON_CONVERTER, alias="key.converter")
    value_converter: str = Field(JSON_CONVERTER, alias="value.converter")
    key_schemas_enable: bool = Field(True, alias="key.converter.schemas.enable")
    value_schemas_enable: bool = Field(True, alias="value.converter.schemas.enable")
    key_schema_registry_url: str | None = Field(None, alias="key.converter.schema.registry.url")
    value_schema_registry_url: str | None = Field(None, alias="value.converter.schema.registry.url")
    # JsonConverter writes a field's default for a null value (Kafka Connect's default: true);
    # Confluent's AvroConverter does the same unless ignore.default.for.nullables.
    key_replace_null: bool = Field(True, alias="key.converter.replace.null.with.default")
    value_replace_null: bool = Field(True, alias="value.converter.replace.null.with.default")
    key_ignore_default_for_nullables: bool = Field(
        False, alias="key.converter.ignore.default.for.nullables")
    value_ignore_default_for_nullables: bool = Field(
        False, alias="value.converter.ignore.default.for.nullables")
    offset_storage_topic: str | None = Field(None, alias="offset.storage.topic")
    schema_history_topic: str | None = Field(None, alias="schema.history.internal.kafka.topic")
    bootstrap_servers: str = Field(alias="bootstrap.servers", min_length=1)
    # Kafka Connect's worker settings of its offsets topic; the replication factor is the
    # broker's default (-1) where Connect's is 3, so one broker works without a setting.
    offset_storage_partitions: int = Field(25, alias="offset.storage.partitions", ge=1)
    offset_storage_replication_factor: int = Field(-1, alias="offset.storage.replication.factor",
                                                   ge=-1)
    # Connect's status topic: the connector's and task's state, read by `gtidmark status`.
    status_storage_topic: str | None = Field(None, alias="status.storage.topic")
    status_storage_partitions: int = Field(5, alias="status.storage.partitions", ge=1)
    status_storage_replication_factor: int = Field(-1, alias="status.storage.replication.factor",
                                                   ge=-1)
    topic_creation_settings: dict[str, str] = Field(default_factory=dict)
    producer: dict[str, str] = Field(default_factory=dict)
    consumer: dict[str, str] = Field(default_factory=dict)
    # librdkafka settings of every client: the Java security settings, rewritten (parse.py).
    kafka_security: dict[str, str] = Field(default_factory=dict)
    # Set from the server at start (`with_server_flavour`); never read from the file.
    server_flavour: Literal["mysql", "mariadb"] | None = Field(None, exclude=True)
    failure_handling_mode: Literal["fail", "warn", "skip", "ignore"] = Field(
        "fail", alias="event.processing.failure.handling.mode"
    )
    # KIP-618: records and their offsets in one Kafka transaction. `required` (or the Connect
    # worker's exactly.once.source.support=enabled) turns it on; `requested`, Connect's
    # default, is at-least-once here as on a worker without exactly-once support.
    exactly_once_support: Literal["requested", "required"] = Field(
        "requested", alias="exactly.once.support")
    exactly_once_source_support: Literal["disabled", "preparing", "enabled"] = Field(
        "disabled", alias="exactly.once.source.support")
    transaction_boundary: Literal["poll", "interval", "connector"] = Field(
        "poll", alias="transaction.boundary")
    transaction_boundary_interval_ms: int = Field(
        60_000, alias="transaction.boundary.interval.ms", ge=1)  # offset.flush.interval.ms's
    ha_enabled: bool = Field(True, alias="ha.enabled")
    ha_session_timeout_ms: int = Field(10_000, alias="ha.session.timeout.ms", ge=1000,
                                       le=300_000)
    rest_port: int = Field(0, alias="rest.port", ge=0, le=65535)
    rest_host: str = Field("127.0.0.1", alias="rest.host", min_length=1)
    rest_auth_user: str | None = Field(None, alias="rest.basic.auth.user", min_length=1)
    rest_auth_password: str | None = Field(None, alias="rest.basic.auth.password", repr=False)
    rest_ready_max_lag_ms: int = Field(10_000, alias="rest.ready.max.lag.ms", ge=0)

    @field_validator(
        "database_include_list",
        "database_exclude_list",
        "table_include_list",
        "table_exclude_list",
        "column_exclude_list",
        "column_include_list",
        "propagate_source_type",
        "propagate_datatype",
        mode="before",
    )
    @classmethod
    def _lists(cls, value: Any) -> list[str]:
        items = _split_list(value)
        for item in items:
            try:
                re.compile(item)
            except re.error as exc:
                raise ValueError(f"{item!r} is not a valid regular expression ({exc})") from exc
        return items

    @field_validator("key_converter", "value_converter")
    @classmethod
    def _converters(cls, value: str) -> str:
        """Refused here, not after the Kafka and database checks a start runs first."""
        if value not in CONVERTERS:
            raise ValueError(f"unsupported converter class (accepted: {', '.join(CONVERTERS)})")
        return value

    @field_validator("message_key_columns")
    @classmethod
    def _message_key_columns(cls, value: str | None) -> str | None:
        """Debezium's validation: `table-regex:col,col` parts separated by `;`."""
        if value is None:
            return None
        if not value:
            raise ValueError("must not be empty")
        for part in value.split(";"):
            if not MESSAGE_KEY_PART.search(part):
                raise ValueError(f"{part!r} is not <fully-qualified table>:<column>[,<column>...]")
        return value

    @field_validator("skipped_operations", mode="before")
    @classmethod
    def _skipped_operations(cls, value: Any) -> frozenset[str]:
        """c, u, d, t, r (read events are never skipped by the MySQL connector) or none."""
        codes = {part.strip() for part in str(value).split(",")}
        unknown = codes - {"c", "u", "d", "t", "r", "none"}
        if unknown:
            raise ValueError(f"invalid operation {min(unknown)!r} (c, u, d, t, r or none)")
        return frozenset(codes - {"none"})

    @field_validator("read_only", "allow_schema_changes", mode="before")
    @classmethod
    def _covered(cls, value: Any, info: ValidationInfo) -> bool:
        """Checked, and what gtidmark does with the value said in one INFO line."""
        alias = cls.model_fields[str(info.field_name)].alias
        return covered.note(str(alias), value)

    @field_validator("snapshot_mode", mode="before")
    @classmethod
    def _debezium_snapshot_modes(cls, value: Any, info: ValidationInfo) -> str:
        """Debezium's values run as what they mean here, or are refused (snapshot_mode.py)."""
        return resolve(value, ConfigurationBased(
            snapshot_data=bool(info.data.get("based_snapshot_data")),
            start_stream=bool(info.data.get("based_start_stream")),
            snapshot_on_data_error=bool(info.data.get("based_snapshot_on_data_error"))))

    @field_validator("signal_channels", mode="before")
    @classmethod
    def _signal_channels(cls, value: Any, info: ValidationInfo) -> frozenset[str]:
        """kafka, source, both or none: Debezium's other channels are not read here (exit 2);
        source needs signal.data.collection, as Debezium requires it."""
        channels = frozenset(name.lower() for name in _split_list(value))
        for name in sorted(channels - set(READ_CHANNELS)):
            if name not in SIGNAL_CHANNELS:
                raise ValueError(f"unknown channel {name!r} (Debezium's: "
                                 f"{', '.join((*READ_CHANNELS, *SIGNAL_CHANNELS))})")
            raise ValueError(f"channel {name!r} {SIGNAL_CHANNELS[name]}; gtidmark reads "
                             "signals from kafka (the signal topic) and source (the signal "
                             "table): use those, or leave it out")
        # A signal.data.collection that failed its own check is not in `info.data`: that
        # line says enough.
        if "source" in channels and info.data.get("signal_data_collection", "") is None:
            raise ValueError("source reads the signals INSERTed into the signal table: set "
                             "signal.data.collection to it (<database>.<table>)")
        return channels

    @field_validator("signal_data_collection")
    @classmethod
    def _signal_data_collection(cls, value: str | None) -> str | None:
        """One `db.table` (Debezium's MySQL form); empty is unset, as in Debezium."""
        value = (value or "").strip() or None
        if value is not None and (value.count(".") != 1 or not all(value.split("."))):
            raise ValueError("one table, <database>.<table> (Debezium's MySQL form)")
        return value

    @model_validator(mode="after")
    def _exclusive_lists(self) -> ConnectorConfig:
        if self.database_include_list and self.database_exclude_list:
            raise ValueError("database.include.list and database.exclude.list are exclusive")
        if self.table_include_list and self.table_exclude_list:
            raise ValueError("table.include.list and table.exclude.list are exclusive")
        if self.column_include_list and self.column_exclude_list:
            raise ValueError("column.include.list and column.exclude.list are exclusive")
        if (self.rest_auth_user is None) != (self.rest_auth_password is None):
            raise ValueError("rest.basic.auth.user and rest.basic.auth.password go together")
        return self

    @property
    def flavour(self) -> Literal["mysql", "mariadb"]:
        """The server's flavour once known; before connecting, a guess from connector.class."""
        if self.server_flavour is not None:
            return self.server_flavour
        return "mariadb" if "mariadb" in self.connector_class.lower() else "mysql"

    @property
    def unwrap(self) -> UnwrapSettings | None:
        """The ExtractNewRecordState transform configured (transforms.*), if any."""
        return unwrap_settings(self.transform_settings)

    @field_validator("offset_storage_replication_factor", "status_storage_replication_factor")
    @classmethod
    def _replication_factor(cls, value: int) -> int:
        if value == 0:
            raise ValueError("a positive number, or -1 for the broker's default")
        return value

    def with_server_flavour(self, flavour: Literal["mysql", "mariadb"]) -> ConnectorConfig:
        return self.model_copy(update={"server_flavour": flavour})

    @property
    def topic_creation(self) -> TopicCreation:
        """How new topics are created (`topic.creation.*`, validated in parse_config)."""
        return TopicCreation.parse(self.topic_creation_settings)

    @property
    def exactly_once(self) -> bool:
        return self.exactly_once_support == "required" or \
            self.exactly_once_source_support == "enabled"

    @property
    def transactional_id(self) -> str:
        """Shaped as Connect's `<worker group>-<connector>-<task>`: every instance of one
        connector shares it, so the broker fences all but the newest (`init_transactions`)."""
        return self.producer.get("transactional.id") or f"gtidmark-{self.name}-0"

    @property
    def kafka_signals(self) -> bool:
        """Whether the signal topic is read (`signal.enabled.channels` has kafka)."""
        return "kafka" in self.signal_channels

    @property
    def source_signal_table(self) -> str | None:
        """The signal table read from the binlog (`source` in signal.enabled.channels)."""
        return self.signal_data_collection if "source" in self.signal_channels else None

    @property
    def signal_kafka_topic(self) -> str:
        return self.signal_topic or f"{self.topic_prefix}-signal"

    @property
    def offsets_topic(self) -> str:
        return self.offset_storage_topic or f"{self.topic_prefix}-offsets"

    @property
    def status_topic(self) -> str:
        return self.status_storage_topic or f"{self.topic_prefix}-status"

    @property
    def history_topic(self) -> str:
        return self.schema_history_topic or f"{self.topic_prefix}-schema-history"

    @property
    def heartbeat_topic(self) -> str:
        return f"__debezium-heartbeat.{self.topic_prefix}"

    @property
    def transaction_topic(self) -> str:
        return f"{self.topic_prefix}.transaction"

    def kafka_common(self) -> dict[str, Any]:
        """librdkafka settings shared by producer and consumers (TLS/SASL pass through here);
        its log lines go through Python logging, a down broker's repeats to DEBUG."""
        return {"bootstrap.servers": self.bootstrap_servers, "logger": KAFKA_LOG,
                **self.kafka_security}

    def producer_settings(self) -> dict[str, Any]:
        return {**self.kafka_common(), **self.producer}

    def consumer_settings(self) -> dict[str, Any]:
        return {**self.kafka_common(), **self.consumer}

    def mysql_settings(self) -> dict[str, Any]:
        """pymysql connection keyword arguments for the replica."""
        settings: dict[str, Any] = {
            "host": self.hostname,
            "port": self.port,
            "user": self.user,
            "passwd": self.password,
        }
        ssl = mysql_ssl(self.ssl_mode, self.ssl_ca)
        if ssl is not None:
            settings["ssl"] = ssl
        return settings
