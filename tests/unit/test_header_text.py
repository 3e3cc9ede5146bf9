"""Key structs as Kafka Connect 4.3's SimpleHeaderConverter writes them.

The expected texts are the JVM's own output (Java 17.0.15, connect-api 4.3.1,
`SimpleHeaderConverter.fromConnectHeader` of a Struct with these fields and values).
"""

from __future__ import annotations

from typing import Any

from connector.events.header_text import double_to_string, struct_text

_C = "org.apache.kafka.connect.data."


def _field(name: str, kind: str, logical: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "optional": True, "field": name,
            **({"name": _C + logical} if logical else {}), **extra}


def _decimal(name: str, scale: int) -> dict[str, Any]:
    return _field(name, "bytes", "Decimal", parameters={"scale": str(scale)})


def _twos(n: int) -> bytes:
    return n.to_bytes((n if n >= 0 else ~n).bit_length() // 8 + 1, "big", signed=True)


def test_key_struct_as_the_jvm_writes_it() -> None:
    fields = [_field("id", "int32"), _field("k2", "string"), _field("f", "float"),
              _field("d", "double"), _field("b", "bytes"), _field("bo", "boolean"),
              _decimal("dec", 2), _field("n", "int64"), _field("dt", "int32", "Date"),
              _field("tm", "int32", "Time"), _field("ts", "int64", "Timestamp"),
              _field("ts0", "int64", "Timestamp"), _decimal("big", 0),
              _field("arr", "array", items={"type": "float", "optional": False})]
    payload = {"id": 101, "k2": "a\"b\\c\nd\u00e9\t\u0001", "f": 1.1, "d": 1e20,
               "b": bytes([1, 2, 255]), "bo": True, "dec": _twos(-1230), "n": None, "dt": 3,
               "tm": 3723004, "ts": 86400000 * 3 + 1234, "ts0": 0,
               "big": _twos(10**21), "arr": [1.5, 1e-7]}
    expected = ('{"id":101,"k2":"a\\"b\\\\c\nd\u00e9\t\u0001","f":1.1,"d":1.0E20,"b":"AQL/",'
                '"bo":true,"dec":-12.30,"n":null,"dt":1970-01-04,"tm":01:02:03.004Z,'
                '"ts":1970-01-04T00:00:01.234Z,"ts0":00:00:00.000Z,'
                '"big":1000000000000000000000,"arr":[1.5,1.0E-7]}')
    assert struct_text({"type": "struct", "fields": fields}, payload) == \
        expected.encode("utf-8")


def test_decimal_and_time_edges_as_the_jvm_writes_them() -> None:
    fields = [_decimal("z", 10), _decimal("small", 9), _field("neg", "int64", "Timestamp"),
              _field("negd", "int32", "Date"), _field("e", "string"), _field("i8", "int8"),
              _field("l", "int64")]
    payload = {"z": _twos(0), "small": _twos(5), "neg": -1500, "negd": -400, "e": "",
               "i8": -5, "l": -9000000000}
    assert struct_text({"type": "struct", "fields": fields}, payload) == (
        b'{"z":0E-10,"small":5E-9,"neg":23:59:58.500Z,"negd":00:00:00.000Z,"e":"",'
        b'"i8":-5,"l":-9000000000}')


def test_doubles_as_java_writes_them() -> None:
    cases = {0.1: "0.1", 1e7: "1.0E7", 1e-3: "0.001", 1e-4: "1.0E-4", 100.0: "100.0",
             1e21: "1.0E21", 123456789.0: "1.23456789E8", -2.5: "-2.5", 0.0: "0.0",
             -1.7976931348623157e308: "-1.7976931348623157E308", 9999999.5: "9999999.5"}
    assert {v: double_to_string(v) for v in cases} == cases
