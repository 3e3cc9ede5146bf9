"""Debezium's snapshot chunk keys: hex of a Java-serialized Object[] (ObjectOutputStream).

Only what a primary key made of integers, strings and byte arrays produces is read (boxed
Integer/Long/Short/Byte, String, byte[]); anything else gives None, and the caller starts
that table again rather than guess a position.
"""

from __future__ import annotations

import struct
from typing import Any

TC_NULL, TC_REFERENCE, TC_CLASSDESC, TC_OBJECT = 0x70, 0x71, 0x72, 0x73
TC_STRING, TC_ARRAY, TC_ENDBLOCKDATA, TC_LONGSTRING = 0x74, 0x75, 0x78, 0x7C
BASE_HANDLE = 0x7E0000
BOXED = {"java.lang.Integer": "i", "java.lang.Long": "q", "java.lang.Short": "h",
         "java.lang.Byte": "b"}
FIELD_CODES = {"java.lang.Integer": "I", "java.lang.Long": "J", "java.lang.Short": "S",
               "java.lang.Byte": "B"}
PRIMITIVE_SIZES = {"B": 1, "C": 2, "D": 8, "F": 4, "I": 4, "J": 8, "S": 2, "Z": 1}


class Unsupported(ValueError):
    """A serialized stream with something this reader does not take."""


class _ClassDesc:
    def __init__(self, name: str, fields: list[tuple[str, str]], flags: int,
                 parent: _ClassDesc | None) -> None:
        self.name, self.fields, self.flags, self.parent = name, fields, flags, parent


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0
        self.handles: list[Any] = []

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise Unsupported("truncated")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(">" + fmt, self.take(struct.calcsize(">" + fmt)))[0]

    def utf(self) -> str:
        return self.take(self.unpack("H")).decode("utf-8")

    def class_desc(self) -> _ClassDesc | None:
        tag = self.unpack("B")
        if tag == TC_NULL:
            return None
        if tag == TC_REFERENCE:
            found = self.reference()
            if not isinstance(found, _ClassDesc):
                raise Unsupported("reference to a non-class")
            return found
        if tag != TC_CLASSDESC:
            raise Unsupported(f"class descriptor tag {tag:#x}")
        name = self.utf()
        self.take(8)  # serialVersionUID
        slot = len(self.handles)
        self.handles.append(None)
        flags = self.unpack("B")
        fields: list[tuple[str, str]] = []
        for _ in range(self.unpack("H")):
            code = chr(self.unpack("B"))
            fields.append((code, self.utf()))
            if code in "[L":
                self.content()  # the field's class name, a string
        if self.unpack("B") != TC_ENDBLOCKDATA:
            raise Unsupported(f"class annotation in {name}")
        desc = _ClassDesc(name, fields, flags, None)
        self.handles[slot] = desc
        desc.parent = self.class_desc()
        return desc

    def reference(self) -> Any:
        index = self.unpack("I") - BASE_HANDLE
        if not 0 <= index < len(self.handles):
            raise Unsupported("bad handle")
        return self.handles[index]

    def content(self) -> Any:
        tag = self.unpack("B")
        if tag == TC_NULL:
            return None
        if tag == TC_REFERENCE:
            return self.reference()
        if tag in (TC_STRING, TC_LONGSTRING):
            size = self.unpack("H" if tag == TC_STRING else "Q")
            # Java's modified UTF-8: characters beyond the BMP come as surrogate pairs
            text = self.take(size).decode("utf-8", "surrogatepass")
            text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
            self.handles.append(text)
            return text
        if tag == TC_ARRAY:
            return self.array()
        if tag == TC_OBJECT:
            return self.boxed()
        raise Unsupported(f"content tag {tag:#x}")

    def array(self) -> Any:
        desc = self.class_desc()
        if desc is None:
            raise Unsupported("array without class")
        slot = len(self.handles)
        self.handles.append(None)
        size = self.unpack("i")
        value: Any
        if desc.name == "[B":
            value = self.take(size)
        elif desc.name == "[Ljava.lang.Object;":
            value = [self.content() for _ in range(size)]
        else:
            raise Unsupported(f"array of {desc.name}")
        self.handles[slot] = value
        return value

    def boxed(self) -> int:
        desc = self.class_desc()
        if desc is None or desc.name not in BOXED:
            raise Unsupported(f"object of {desc.name if desc else None}")
        slot = len(self.handles)
        self.handles.append(None)
        chain: list[_ClassDesc] = []
        node: _ClassDesc | None = desc
        while node is not None:
            chain.insert(0, node)
            node = node.parent
        value: int | None = None
        for cls in chain:  # superclass data first; Number has no fields
            for code, _name in cls.fields:
                if cls is desc and code == FIELD_CODES[desc.name]:
                    value = int(self.unpack(BOXED[desc.name]))
                elif code in PRIMITIVE_SIZES:
                    raise Unsupported(f"field {code} in {cls.name}")
                else:
                    raise Unsupported(f"object field in {cls.name}")
        if value is None:
            raise Unsupported(f"no value in {desc.name}")
        self.handles[slot] = value
        return value


def decode_java_key(hex_text: Any) -> tuple[Any, ...] | None:
    """The key tuple in a Debezium chunk position, or None if absent or not readable."""
    if not isinstance(hex_text, str) or not hex_text:
        return None
    try:
        reader = _Reader(bytes.fromhex(hex_text))
        if reader.take(4) != b"\xac\xed\x00\x05":
            return None
        value = reader.content()
        if reader.at != len(reader.data) or not isinstance(value, list):
            return None
        return tuple(value)
    except (Unsupported, ValueError, UnicodeDecodeError, struct.error):
        return None
