"""Types of the compiled module (source: connector/native/src/)."""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

class RowWriter:
    def __init__(self, columns: Sequence[tuple[str, Callable[[Any], Any] | None, Any,
                                               tuple[str, int, tuple[str, ...]] | None]],
                 dumps: Callable[[Any], str]) -> None: ...
    def row(self, row: Mapping[str, Any]) -> bytes: ...

class TableRecords:
    def __init__(self, value_rows: RowWriter, value_prefix: bytes, key_rows: RowWriter | None,
                 key_prefix: bytes, schemas: tuple[bool, bool]) -> None: ...
    def key(self, row: Mapping[str, Any]) -> bytes | None: ...
    def value(self, op: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None,
              head: str, tail: str, row: int, ts_ms: int, transaction: str | None) -> bytes: ...
    def records(self, op: str, rows: list[Any], head: str, tail: str, ts_ms: int,
                transaction: tuple[str, int, int] | None,
                first: int) -> list[tuple[bytes | None, bytes]]: ...

AvroType: TypeAlias = tuple[Any, ...]
"""("long",), ("union", null index, type), ("array", items), ("record", [(name, type)])."""

class AvroRows:
    def __init__(self, columns: Sequence[tuple[str, AvroType, Callable[[Any], Any] | None, Any,
                                               Callable[[Any], bytes],
                                               tuple[str, int, tuple[str, ...]] | None]]
                 ) -> None: ...
    def record(self, header: bytes, row: Mapping[str, Any]) -> bytes: ...

class AvroRecords:
    def __init__(self, value_rows: AvroRows, key_rows: AvroRows | None) -> None: ...
    def value(self, header: bytes, op: str, before: Mapping[str, Any] | None,
              after: Mapping[str, Any] | None, head: bytes, tail: bytes, row: int, ts_ms: int,
              transaction: tuple[str, int, int] | None) -> bytes: ...
    def records(self, headers: tuple[bytes | None, bytes], op: str, rows: list[Any],
                head: bytes, tail: bytes, ts_ms: int, transaction: tuple[str, int, int] | None,
                first: int) -> list[tuple[bytes | None, bytes]]: ...

# (name, kind, unsigned, size, precision or fsp, scale, codec, charset table, members)
_ColumnShape: TypeAlias = tuple[str, str, bool, int, int, int, str | None, Sequence[int] | None,
                          Sequence[Any] | None]

class RowImages:
    def __init__(self, columns: Sequence[_ColumnShape]) -> None: ...
    def rows(self, data: bytes, pos: int, end: int, update: bool) -> list[Any]: ...
    def image(self, data: bytes, pos: int) -> tuple[dict[str, Any], int]: ...
