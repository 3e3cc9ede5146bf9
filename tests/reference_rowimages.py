"""The Python reference of the compiled row-image decoder (connector._native.RowImages).

Until the decoder moved to Rust, the reader generated and ran this Python code per table
version; it gives exactly mysql-replication 1.0.17's values (tests/integration/
test_rowimages.py checked it against the library), and tests/unit/test_rowimages_native.py
compares the compiled decoder with it on random bytes.
"""

from __future__ import annotations

import codecs
import datetime as dt
import struct
from collections.abc import Callable
from typing import Any

from pymysqlreplication.constants import FIELD_TYPE
from pymysqlreplication.row_event import RowsEvent

from connector.binlog.decimals import decimal_reader

Image = dict[str, Any]
ImageReader = Callable[[bytes, int], tuple[Image, int]]

_INTS = {FIELD_TYPE.TINY: "b", FIELD_TYPE.SHORT: "h", FIELD_TYPE.LONG: "i",
         FIELD_TYPE.LONGLONG: "q"}
_FSP_BYTES = (0, 1, 1, 2, 2, 3, 3)


def _fsp(fsp: int) -> tuple[int, str]:
    """Bytes of the fraction and the expression giving its microseconds (`f` holds them)."""
    size = _FSP_BYTES[fsp]
    if not size:
        return 0, "0"
    scaled = "int(f / 10)" if fsp % 2 else "f"
    return size, f"{scaled} * {10 ** (6 - fsp)}"


def _text_of(column: Any) -> str:
    """How the library turns a string column's bytes into its value."""
    if column.character_set_name is None:
        return ".decode()"
    encoding = RowsEvent.charset_to_encoding(column.character_set_name)
    try:
        codecs.lookup(encoding)
    except LookupError:  # binary columns: the library keeps the bytes, but Python decodes
        return " or ''"  # b'' with any encoding name, so an empty value comes out as ''
    return f".decode({encoding!r})"


def _value_code(i: int, column: Any, env: dict[str, Any]) -> list[str] | None:
    """Lines that read column i at `pos` into `v` and move `pos` on; None: not supported."""
    kind = column.type
    if kind in _INTS:
        code = _INTS[kind].upper() if column.unsigned else _INTS[kind]
        env[f"s{i}"] = struct.Struct("<" + code)
        return [f"v = s{i}.unpack_from(data, pos)[0]", f"pos += {env[f's{i}'].size}"]
    if kind == FIELD_TYPE.INT24:
        return [f"v = int.from_bytes(data[pos:pos + 3], 'little', signed={not column.unsigned})",
                "pos += 3"]
    if kind in (FIELD_TYPE.FLOAT, FIELD_TYPE.DOUBLE):
        env[f"s{i}"] = struct.Struct("<f" if kind == FIELD_TYPE.FLOAT else "<d")
        return [f"v = s{i}.unpack_from(data, pos)[0]", f"pos += {env[f's{i}'].size}"]
    if kind in (FIELD_TYPE.VARCHAR, FIELD_TYPE.STRING, FIELD_TYPE.BLOB):
        size = column.length_size if kind == FIELD_TYPE.BLOB else (
            2 if column.max_length > 255 else 1)
        return [f"n = int.from_bytes(data[pos:pos + {size}], 'little')",
                f"v = data[pos + {size}:pos + {size} + n]{_text_of(column)}",
                f"pos += {size} + n"]
    if kind == FIELD_TYPE.NEWDECIMAL:
        env[f"r{i}"] = decimal_reader(column.precision, column.decimals)
        return [f"v, pos = r{i}(data, pos)"]
    if kind == FIELD_TYPE.DATE:
        return ["t = int.from_bytes(data[pos:pos + 3], 'little')", "pos += 3",
                "y, m, d = t >> 9 & 0x7FFF, t >> 5 & 15, t & 31",
                "v = DATE(y, m, d) if y and m and d else None"]
    if kind == FIELD_TYPE.DATETIME2:
        size, micros = _fsp(column.fsp)
        lines = ["t = int.from_bytes(data[pos:pos + 5], 'big')"]
        if size:
            lines.append(f"f = int.from_bytes(data[pos + 5:pos + {5 + size}], 'big', signed=True)")
        lines += [f"pos += {5 + size}", "ym = t >> 22 & 0x1FFFF",
                 "try:",
                 "    v = DATETIME(ym // 13, ym % 13, t >> 17 & 31, t >> 12 & 31, t >> 6 & 63, t & 63)",
                 "except ValueError:",
                 "    v = None"]
        if size:
            lines += [f"if v is not None and (f := {micros}) > 0:",
                      "    v = v.replace(microsecond=f)"]
        return lines
    if kind == FIELD_TYPE.TIMESTAMP2:
        size, micros = _fsp(column.fsp)
        lines = ["v = UTC(int.from_bytes(data[pos:pos + 4], 'big', signed=True))"]
        if size:
            lines += [f"f = int.from_bytes(data[pos + 4:pos + {4 + size}], 'big', signed=True)",
                      f"if (f := {micros}) > 0:", "    v = v.replace(microsecond=f)"]
        lines.append(f"pos += {4 + size}")
        return lines
    if kind == FIELD_TYPE.YEAR:
        return ["v = data[pos] + 1900", "pos += 1"]
    if kind == FIELD_TYPE.ENUM:
        env[f"e{i}"] = column.enum_values
        index = f"int.from_bytes(data[pos:pos + {column.size}], 'little')"
        return [f"v = e{i}[{index}] if e{i} else None", f"pos += {column.size}"]
    if kind == FIELD_TYPE.SET:
        env[f"e{i}"] = tuple(enumerate(column.set_values or ()))
        return [f"t = int.from_bytes(data[pos:pos + {column.size}], 'little')",
                f"pos += {column.size}",
                f"v = {{m for b, m in e{i} if t >> b & 1}} or ''"]  # empty SET: ''
    return None


def image_reader(columns: list[Any]) -> ImageReader | None:
    """One image (null bitmap, then each non-NULL value) of a FULL-image rows event."""
    env: dict[str, Any] = {"DATE": dt.date, "DATETIME": dt.datetime,
                           "UTC": dt.datetime.utcfromtimestamp}
    nulls = (len(columns) + 7) // 8
    lines = ["def image(data, pos):",
             f"    nulls = int.from_bytes(data[pos:pos + {nulls}], 'little')",
             f"    pos += {nulls}"]
    names = []
    for i, column in enumerate(columns):
        code = _value_code(i, column, env)
        if code is None or not column.name:
            return None
        lines += [f"    if nulls >> {i} & 1:", "        v = None", "    else:"]
        lines += ["        " + line for line in code]
        lines.append(f"    c{i} = v")
        names.append(f"{column.name!r}: c{i}")
    lines.append("    return {" + ", ".join(names) + "}, pos")
    exec(compile("\n".join(lines) + "\n", "<binlog-row-image>", "exec"), env)  # noqa: S102
    reader: ImageReader = env["image"]
    return reader


def reference_rows(image: ImageReader, data: bytes, pos: int, end: int,
                   update: bool) -> list[Any]:
    """A rows event body's images (updates: (before, after) pairs), as the reader did."""
    rows: list[Any] = []
    if update:
        while pos < end:
            before, pos = image(data, pos)
            after, pos = image(data, pos)
            rows.append((before, after))
    else:
        while pos < end:
            row, pos = image(data, pos)
            rows.append(row)
    return rows
