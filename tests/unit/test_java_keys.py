"""Debezium's chunk keys read back from what Java's own ObjectOutputStream writes."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import Any

from connector.offsets.java_keys import decode_java_key

# Runs in a child process: the JVM never lives in the pytest process.
JAVA_SERIALIZER = """
import json, sys
import jpype, jpype.imports
jpype.startJVM()
from java.io import ByteArrayOutputStream, ObjectOutputStream
from java.lang import Byte, Integer, Long, Object, Short, String
from java.math import BigDecimal
BOX = {"int": Integer, "long": Long, "short": Short, "byte": Byte, "str": String,
       "decimal": BigDecimal}
for line in sys.stdin:
    items = []
    for kind, value in json.loads(line):
        if kind == "bytes":
            items.append(jpype.JArray(jpype.JByte)(bytes.fromhex(value)))
        elif kind == "null":
            items.append(None)
        else:
            items.append(BOX[kind](value))
    out = ByteArrayOutputStream()
    stream = ObjectOutputStream(out)
    stream.writeObject(jpype.JArray(Object)(items))
    stream.close()
    print(bytes(out.toByteArray()).hex(), flush=True)
"""


def java_serialized(keys: list[list[tuple[str, Any]]]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", JAVA_SERIALIZER], text=True, check=True,
                          input="".join(json.dumps(k) + "\n" for k in keys),
                          capture_output=True, timeout=120)
    return done.stdout.split()


def random_key(rng: random.Random) -> list[tuple[str, Any]]:
    limits = {"int": 2**31, "long": 2**63, "short": 2**15, "byte": 2**7}
    parts: list[tuple[str, Any]] = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice([*limits, "str", "bytes", "null"])
        if kind in limits:
            parts.append((kind, rng.randrange(-limits[kind], limits[kind])))
        elif kind == "str":
            parts.append((kind, "".join(chr(rng.choice([rng.randint(32, 126),
                                                        rng.randint(0xA0, 0xD7FF),
                                                        rng.randint(0x10000, 0x10FFFF)]))
                                        for _ in range(rng.randint(0, 12)))))
        elif kind == "bytes":
            parts.append((kind, rng.randbytes(rng.randint(0, 16)).hex()))
        else:
            parts.append((kind, None))
    return parts


def expected(key: list[tuple[str, Any]]) -> tuple[Any, ...]:
    return tuple(bytes.fromhex(v) if kind == "bytes" else v for kind, v in key)


def test_keys_of_integers_strings_and_bytes_read_back() -> None:
    rng = random.Random(5)
    keys = [random_key(rng) for _ in range(300)]
    keys.append([("int", 7), ("int", 8), ("str", "a"), ("str", "a")])  # back-references
    decoded = [decode_java_key(h) for h in java_serialized(keys)]
    assert decoded == [expected(k) for k in keys]


def test_unsupported_or_damaged_keys_give_none() -> None:
    decimal_key, int_key = java_serialized([[("decimal", "12.5")], [("int", 1)]])
    assert decode_java_key(decimal_key) is None
    assert decode_java_key(int_key[:-2]) is None  # truncated
    assert decode_java_key(int_key + "00") is None  # trailing bytes
    assert decode_java_key("zz") is None and decode_java_key(None) is None
