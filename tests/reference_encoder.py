"""The Python JSON record writer the compiled one (connector/native) replaced.

Kept as the oracle of the differential test: the same columns (a `TableEncoder`'s
`writer_columns`, converted by their Python converters, never the compiled conversions), the
same schema part and source block, written by generated Python.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable, Iterable, Mapping
from json.encoder import encode_basestring
from typing import Any

from connector.events.converters import JsonCodec, dumps
from connector.events.envelope import TableEncoder, WriterColumn
from connector.events.source_block import SourceInfo, SourceStruct
from connector.settings.model import ConnectorConfig

# How a converted value of each Connect type is written, with the generic encoder as the
# fallback for anything unexpected, so the text is always what `dumps` would produce.
_WRITE_BY_TYPE = {
    "int8": "str(v) if type(v) is int else D(v)",
    "int16": "str(v) if type(v) is int else D(v)",
    "int32": "str(v) if type(v) is int else D(v)",
    "int64": "str(v) if type(v) is int else D(v)",
    "string": "E(v) if type(v) is str else D(v)",
    "bytes": "'\"' + B(v, newline=False).decode('ascii') + '\"' if type(v) is bytes else D(v)",
    "boolean": "('true' if v else 'false') if type(v) is bool else D(v)",
}


def json_row_writer(columns: Iterable[WriterColumn]) -> Callable[[Mapping[str, Any]], str]:
    """Row dict -> the JSON text of its converted columns (one generated function)."""
    env: dict[str, Any] = {"D": dumps, "E": encode_basestring, "B": binascii.b2a_base64}
    lines = ["def write(row):", "    g = row.get"]
    parts = []
    for i, (name, connect_type, convert, fallback, _compiled) in enumerate(columns):
        env[f"f{i}"] = fallback
        key = repr(name)
        if convert is None:
            lines.append(f"    v = f{i} if (v := g({key})) is None else v")
        else:
            env[f"c{i}"] = convert
            lines.append(f"    v = f{i} if (v := g({key})) is None or (v := c{i}(v)) is None"
                         " else v")
        write = _WRITE_BY_TYPE.get(connect_type, "D(v)")
        lines.append(f"    s{i} = 'null' if v is None else {write}")
        sep = "{" if i == 0 else ","
        parts.append(repr(sep + dumps(name) + ":"))
        parts.append(f"s{i}")
    if not parts:
        lines.append("    return '{}'")
    else:
        lines.append("    return ''.join((" + ", ".join(parts) + ", '}'))")
    exec(compile("\n".join(lines) + "\n", "<json-row-writer>", "exec"), env)  # noqa: S102
    write: Callable[[Mapping[str, Any]], str] = env["write"]
    return write


_OPS = {op: f'"{op}"' for op in ("c", "u", "d", "r")}


class ReferenceEncoder:
    """Key and value records of one table as the Python encoder wrote them (JSON only)."""

    def __init__(self, config: ConnectorConfig, table: TableEncoder) -> None:
        value_columns, key_columns = table.writer_columns
        self._row = json_row_writer(value_columns)
        self._key_row = json_row_writer(key_columns) if key_columns else None
        self._value_prefix = JsonCodec(table.value_schema, config.value_schemas_enable).prefix
        self._value_suffix = b"}" if config.value_schemas_enable else b""
        key_schemas = config.key_schemas_enable
        self._key_prefix = (JsonCodec(table.key_schema, key_schemas).prefix
                            if table.key_schema is not None else b"")
        self._key_suffix = b"}" if key_schemas else b""
        self._source = SourceStruct(config.flavour, config.topic_prefix,
                                    "false" if config.value_replace_null else None)

    def key(self, row: Mapping[str, Any]) -> bytes | None:
        if self._key_row is None:
            return None
        return self._key_prefix + self._key_row(row).encode("utf-8") + self._key_suffix

    def value(self, op: str, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None,
              source: SourceInfo, ts_ms: int, transaction: dict[str, Any] | None) -> bytes:
        head, tail = self._source.json_parts(source)
        text = "".join((
            '{"before":', "null" if before is None else self._row(before),
            ',"after":', "null" if after is None else self._row(after),
            ',"source":', head, str(source.row), tail,
            ',"transaction":', "null" if transaction is None else dumps(transaction),
            ',"op":', _OPS.get(op) or dumps(op),
            ',"ts_ms":', str(ts_ms), ',"ts_us":', str(ts_ms * 1000),
            ',"ts_ns":', str(ts_ms * 1_000_000), "}"))
        return self._value_prefix + text.encode("utf-8") + self._value_suffix
