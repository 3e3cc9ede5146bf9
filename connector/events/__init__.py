"""Envelope building, Debezium type mapping and Kafka Connect converters (JSON, Avro)."""

from connector.events.envelope import EventEncoder, TableEncoder
from connector.events.history import table_change
from connector.events.source_block import SourceInfo
from connector.events.types import restore_empty_sets

__all__ = ["EventEncoder", "SourceInfo", "TableEncoder", "restore_empty_sets", "table_change"]
