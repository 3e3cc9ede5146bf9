"""Debezium keys that change records: honoured ones load, the others stop `gtidmark run` (exit 2)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from connector.settings.errors import ConfigError
from connector.settings.parse import parse_config

BASE: dict[str, Any] = {
    "database.hostname": "replica.example",
    "database.user": "cdc",
    "database.server.id": "5400",
    "topic.prefix": "shop",
    "bootstrap.servers": "kafka:9092",
}


def doc(extra: dict[str, Any]) -> dict[str, Any]:
    return {"name": "shop-connector", "config": {**BASE, **extra}}


def run_cli(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "connector.cli", "run", "--config", str(path)],
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize(("extra", "line"), [
    ({"transforms": "route", "transforms.route.type":
      "org.apache.kafka.connect.transforms.RegexRouter"},
     ("transforms: transform 'route' (org.apache.kafka.connect.transforms.RegexRouter) is "
      "not applied here")),
    ({"predicates": "p"}, "predicates: changes what is written"),
    ({"converters": "boolean"}, "converters: changes what is written and is not supported"),
    ({"column.mask.hash.MD2.with.salt.s": "db.t.c"},
     "column.mask.hash.MD2.with.salt.s: hash algorithm 'MD2' is not supported"),
    ({"column.mask.with.x.chars": "db.t.c"}, "column.mask.with.x.chars: not a column mapper"),
    ({"binary.handling.mode": "base64"},
     ("binary.handling.mode: changes what is written; only 'bytes' (Debezium's default) is "
      "supported (got 'base64')")),
    ({"include.schema.changes": False}, "include.schema.changes: changes what is written"),
    ({"value.converter.value.subject.name.strategy":
      "io.confluent.kafka.serializers.subject.RecordNameStrategy"},
     "value.converter.value.subject.name.strategy: changes what is written"),
    ({"snapshot.include.collection.list": "db.t"},
     "snapshot.include.collection.list: changes what is written"),
    ({"skipped.operations": "c,x"}, "skipped.operations: invalid operation 'x'"),
    ({"message.key.columns": "db.t"}, "message.key.columns: 'db.t' is not <fully-qualified"),
    ({"column.include.list": "a", "column.exclude.list": "b"},
     "column.include.list and column.exclude.list are exclusive"),
])
def test_a_record_changing_key_not_honoured_exits_2_naming_it(
        tmp_path: Path, extra: dict[str, Any], line: str) -> None:
    path = tmp_path / "connector.json"
    path.write_text(json.dumps(doc(extra)))
    result = run_cli(path)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and line in lines[0], lines
    assert "Traceback" not in result.stderr + result.stdout


def test_every_refused_or_invalid_key_of_a_file_is_named_in_one_run(tmp_path: Path) -> None:
    """A production Debezium JSON with several keys gtidmark cannot honour: all of them in
    one run (in the file's order, then the invalid values), each with what to do instead."""
    path = tmp_path / "connector.json"
    path.write_text(json.dumps({"name": "shop-connector", "config": {
        "database.hostname": "replica.example", "database.user": "cdc",
        "database.server.id": "5400", "topic.prefix": "shop",
        "include.schema.changes": "false", "binary.handling.mode": "base64",
        "converters": "boolean", "transforms": "route",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "schema.history.internal": "io.debezium.storage.file.history.FileSchemaHistory",
        "snapshot.locking.mode": "shared", "database.port": "x"}}))
    result = run_cli(path)
    assert result.returncode == 2
    assert [line.removeprefix(f"error: {path}: ") for line in result.stderr.splitlines()] == [
        ("include.schema.changes: changes what is written; only 'true' (Debezium's default) is "
         "supported (got 'false'); set it to 'true' or remove the key"),
        ("binary.handling.mode: changes what is written; only 'bytes' (Debezium's default) is "
         "supported (got 'base64'); set it to 'bytes' or remove the key"),
        ("converters: changes what is written and is not supported (custom converters are "
         "Java classes); remove the key"),
        ("transforms: transform 'route' (org.apache.kafka.connect.transforms.RegexRouter) is "
         "not applied here (supported: io.debezium.transforms.ExtractNewRecordState); take "
         "'route' out of transforms"),
        ("schema.history.internal: gtidmark keeps the schema history in a Kafka topic "
         "(io.debezium.storage.kafka.history.KafkaSchemaHistory, schema.history.internal."
         "kafka.topic); this class would keep it elsewhere, where it would not be found: use "
         "io.debezium.storage.kafka.history.KafkaSchemaHistory or leave the key out (got "
         "'io.debezium.storage.file.history.FileSchemaHistory')"),
        ("snapshot.locking.mode: one of minimal, minimal_percona, "
         "minimal_percona_no_table_locks, extended, none, custom (got 'shared')"),
        ("database.port: Input should be a valid integer, unable to parse string as an "
         "integer (got 'x')"),
        "bootstrap.servers: required setting is missing",
    ], result.stderr


def test_an_unknown_key_close_to_a_known_one_warns_with_did_you_mean(tmp_path: Path) -> None:
    """Warnings, not refusals: the run stops here only on the bad port that follows them."""
    path = tmp_path / "connector.json"
    path.write_text(json.dumps(doc({"colum.include.list": "db.t.c", "frobnicate": 1,
                                    "database.port": "x"})))
    result = run_cli(path)
    assert result.returncode == 2
    warnings = [line.split(" WARNING ", 1)[1] for line in result.stderr.splitlines()
                if " WARNING " in line]
    assert warnings == [
        ("connector.settings.parse: config: unknown key 'colum.include.list' ignored; did you mean "
         "'column.include.list'?"),
        "connector.settings.parse: config: unknown key 'frobnicate' ignored",
    ], result.stderr
    assert result.stderr.splitlines()[-1].startswith(f"error: {path}: database.port:")


def test_honoured_keys_load_silently(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    c = parse_config(doc({
        "column.mask.with.12.chars": "db.t.a", "column.truncate.to.20.chars": "db.t.b",
        "column.mask.hash.SHA-256.with.salt.CzQMA0cB5K": "db.t.c",
        "column.mask.hash.v2.SHA-256.with.salt.s.a.l.t": "db.t.d",
        "column.include.list": "db.t.a,db.t.b", "message.key.columns": "db.t:a,b;db.u:x",
        "skipped.operations": "c, d", "column.propagate.source.type": "db.t.*",
        "datatype.propagate.source.type": ".+\\.VARCHAR", "binary.handling.mode": "bytes",
        "include.schema.changes": "true", "predicates": "",
    }))
    assert caplog.records == []
    assert list(c.column_mappers) == [
        "column.mask.with.12.chars", "column.truncate.to.20.chars",
        "column.mask.hash.SHA-256.with.salt.CzQMA0cB5K",
        "column.mask.hash.v2.SHA-256.with.salt.s.a.l.t"]
    assert c.skipped_operations == {"c", "d"}
    assert c.column_include_list == ["db.t.a", "db.t.b"]
    assert parse_config(doc({"skipped.operations": "none"})).skipped_operations == set()
    assert parse_config(doc({})).skipped_operations == {"t"}


def test_options_of_an_unlisted_transform_change_nothing() -> None:
    """Kafka Connect reads transforms.<alias>.* only for aliases listed in `transforms`."""
    c = parse_config(doc({"transforms.old.type": "x", "transforms.old.regex": "y"}))
    assert c.transform_settings == {"transforms.old.type": "x", "transforms.old.regex": "y"}
    with pytest.raises(ConfigError, match="transforms: transform 'a' .no type."):
        parse_config(doc({"transforms": "a"}))
