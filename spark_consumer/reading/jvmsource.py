"""The one-pass MERGE source of a table read and decoded in the JVM: Spark's Kafka source over
the job's own offset ranges (read_committed), `from_json` with a schema built from the table's
columns, and the last change per key kept by a Spark aggregate.

It takes JSON-with-schemas records whose value and key schemas the driver accepted for the
table as it is (`SchemaVerdicts`): every field a column of the same conversion and a type the
column holds. Any other record (an unknown schema, schemaless JSON, a bad record, a truncate)
fails the MERGE's tasks with `MISFIT` before anything is committed; the job then learns the
new schemas or takes the Python read-first path (source.py), which evolves, cuts or
dead-letters. Counts and the newest record's time come back as observed metrics of the MERGE.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StringType, StructField, StructType, _parse_datatype_string

from spark_consumer.decoding.columnar import OP_COLUMN
from spark_consumer.decoding.dbztypes import (
    BYTES_B64,
    DATE_DAYS,
    PLAIN,
    TS_ISO,
    TS_MICROS,
    TS_MILLIS,
    TS_NANOS,
    ColumnSpec,
    SchemaError,
    specs_from_struct_schema,
)
from spark_consumer.decoding.decode import OPS, field_schema
from spark_consumer.iceberg.evolution import TypeChangeError, promoted_type
from spark_consumer.iceberg.tables import TableState
from spark_consumer.reading.planner import OffsetRange
from spark_consumer.reading.reader import RangeStats
from spark_consumer.reading.source import MISFIT

PLAIN_TYPES = frozenset({"tinyint", "smallint", "int", "bigint", "float", "double", "boolean",
                         "string"})
_RAW = {BYTES_B64: "string", TS_ISO: "string", DATE_DAYS: "bigint", TS_MILLIS: "bigint",
        TS_MICROS: "bigint", TS_NANOS: "bigint"}
_MALFORMED = ("MALFORMED_RECORD_IN_PARSING", "Malformed records are detected")
Signature = tuple[tuple[ColumnSpec, ...], tuple[str, ...]]


def takes_columns(columns: list[ColumnSpec]) -> bool:
    """Whether every column's values convert in the JVM (a Connect Decimal or a JSON-text
    column does not: the Python decoders keep their exact rules)."""
    return all((c.conversion == PLAIN and c.spark_type in PLAIN_TYPES)
               or c.conversion in _RAW for c in columns)


def jvm_misfit(exc: BaseException) -> bool:
    """Whether a failed MERGE of a JVM source failed on a record it does not take."""
    text = str(exc)
    return MISFIT in text or any(m in text for m in _MALFORMED)


def _raw_type(spec: ColumnSpec) -> DataType:
    return _parse_datatype_string(_RAW.get(spec.conversion, spec.spark_type))


def _converted(raw: Column, spec: ColumnSpec) -> Column:
    """A column's JSON value (as parsed by `_raw_type`) -> the value of the table column."""
    kind = spec.conversion
    if kind == BYTES_B64:
        return F.unbase64(raw)
    if kind == DATE_DAYS:
        return F.date_from_unix_date(raw.cast("int"))
    if kind == TS_MILLIS:
        return F.timestamp_millis(raw)
    if kind == TS_MICROS:
        return F.timestamp_micros(raw)
    if kind == TS_NANOS:  # floor division, as the Python decoder's `//`; integral (`div`):
        # `/` is a double's, a microsecond off for some values and refused by ANSI mode
        floored = raw - F.pmod(raw, F.lit(1000))
        return F.timestamp_micros(F.call_function("div", floored, F.lit(1000)))
    if kind == TS_ISO:  # null for a text Spark does not read (ANSI mode's cast would throw)
        return F.try_to_timestamp(raw)
    return raw


def _fits(spec: ColumnSpec, column: ColumnSpec | None) -> bool:
    if column is None or spec.conversion != column.conversion or spec.scale != column.scale:
        return False
    try:
        return promoted_type("", spec.name, column.spark_type, spec.spark_type) is None
    except TypeChangeError:
        return False


def _image_ok(state: TableState, schema: dict[str, Any]) -> bool:
    """Every field of both images of a value schema is a column of the table it fits."""
    columns = state.by_name()
    if field_schema(schema, "after") is None:
        return False
    images = [field_schema(schema, name) for name in ("before", "after")]
    specs = [s for image in images if image for s in specs_from_struct_schema(image)]
    return all(_fits(s, columns.get(s.name)) for s in specs)


def _key_ok(state: TableState, schema: dict[str, Any]) -> bool:
    """The key schema's fields are the table's key columns, each of a type it fits."""
    keys, columns = specs_from_struct_schema(schema), state.by_name()
    return ({k.name for k in keys} == set(state.key_columns)
            and all(_fits(k, columns.get(k.name)) for k in keys))


_HEAD = re.compile(r'\{\s*"schema"\s*:\s*')
_TAIL = re.compile(r'\s*,\s*')
PAYLOAD = '"payload":'


def schema_of(head: str) -> dict[str, Any] | None:
    """The schema of a record's text before `"payload":` (`{"schema": {...},`): None unless
    that is exactly one JSON object between the two keys."""
    start = _HEAD.match(head)
    if start is None:
        return None
    try:
        schema, end = json.JSONDecoder().raw_decode(head, start.end())
    except ValueError:
        return None
    if not isinstance(schema, dict) or _TAIL.fullmatch(head, end) is None:
        return None
    return schema


class SchemaVerdicts:
    """Per table shape, the record heads (`{"schema": {...},"payload":`, byte for byte) whose
    records the JVM path takes: a record's schema is then matched by a prefix comparison and
    only its payload parsed. Learnt once per new schema, process-wide (the verdict depends on
    the table's columns and key only)."""

    _known: ClassVar[dict[Signature, dict[tuple[str, bytes], bool]]] = {}

    @staticmethod
    def signature(state: TableState) -> Signature:
        return tuple(state.columns), tuple(state.key_columns)

    def accepted(self, state: TableState, side: str) -> list[bytes]:
        """The accepted heads of values (`side` "v") or keys ("k")."""
        known = self._known.get(self.signature(state), {})
        return [head for (which, head), ok in known.items() if ok and which == side]

    def judge(self, state: TableState, side: str, head: bytes) -> bool:
        """Accept or refuse one head (the text before and with `"payload":`)."""
        schema = schema_of(head.decode("utf-8", "replace")[:-len(PAYLOAD)])
        try:
            ok = schema is not None and (_image_ok(state, schema) if side == "v"
                                         else _key_ok(state, schema))
        except SchemaError:
            ok = False
        self._known.setdefault(self.signature(state), {})[(side, head)] = ok
        return ok

    def learn(self, state: TableState, frame: DataFrame) -> bool:
        """Judge the heads of `frame`'s records (Spark's Kafka source) not judged yet (a few
        per call); whether any new one was accepted."""
        new = False
        for side, column in (("v", "value"), ("k", "key")):
            text = F.col(column).cast("string")
            heads = frame.where(F.col("value").isNotNull() & ~_matched(column,
                                                                       self.accepted(state, side)))
            rows = heads.select(F.concat(F.substring_index(text, PAYLOAD, 1), F.lit(PAYLOAD))
                                .alias("head")).distinct().limit(16).collect()
            for row in rows:
                head = str(row["head"]).encode()
                if (side, head) not in self._known.get(self.signature(state), {}):
                    new = self.judge(state, side, head) or new
        return new


def _matched(column: str, heads: list[bytes]) -> Column:
    """Whether the record's `column` starts with one of `heads` and ends its object."""
    if not heads:
        return F.lit(False)
    starts = [F.expr(f"startswith({column}, X'{h.hex()}')") for h in heads]
    any_start = starts[0]
    for more in starts[1:]:
        any_start = any_start | more
    return any_start & F.expr(f"endswith({column}, X'7d')")


def _payload(column: str, heads: list[bytes], schema: StructType) -> Column:
    """The payload of a record whose `column` starts with one of `heads`, parsed (FAILFAST);
    null for any other."""
    out = F.lit(None).cast("string")
    for head in reversed(heads):
        text = F.expr(f"substring({column}, {len(head) + 1}, length({column}) - "
                      f"{len(head) + 1})").cast("string")
        out = F.when(F.expr(f"startswith({column}, X'{head.hex()}')"), text).otherwise(out)
    return F.from_json(out, schema, {"mode": "FAILFAST"})


def kafka_frame(spark: SparkSession, options: dict[str, str],
                ranges: list[OffsetRange]) -> DataFrame:
    """Spark's Kafka source over exactly `ranges` (read_committed: the planner's ends are the
    last stable offsets)."""
    assign: dict[str, list[int]] = {}
    starts: dict[str, dict[str, int]] = {}
    ends: dict[str, dict[str, int]] = {}
    for r in ranges:
        assign.setdefault(r.topic, []).append(r.partition)
        starts.setdefault(r.topic, {})[str(r.partition)] = r.start
        ends.setdefault(r.topic, {})[str(r.partition)] = r.end
    return spark.read.format("kafka").options(**options) \
        .option("kafka.isolation.level", "read_committed") \
        .option("assign", json.dumps(assign)).option("startingOffsets", json.dumps(starts)) \
        .option("endingOffsets", json.dumps(ends)).load()


def _struct(specs: list[ColumnSpec]) -> StructType:
    return StructType([StructField(s.name, _raw_type(s)) for s in specs])


def decoded(frame: DataFrame, state: TableState, heads: list[bytes],
            key_heads: list[bytes]) -> DataFrame:
    """Each record's payload (`v`) and key payload (`k`) parsed, for records whose value and
    key start with an accepted head (else null, `fits` false)."""
    image = _struct(state.columns)
    by_name = state.by_name()
    payload = StructType([StructField("op", StringType()), StructField("before", image),
                          StructField("after", image)])
    key = _struct([by_name[k] for k in state.key_columns])
    return frame.select(
        "topic", "partition", "offset", "timestamp", "value",
        _payload("value", heads, payload).alias("v"), _payload("key", key_heads, key).alias("k"),
        (_matched("value", heads) & _matched("key", key_heads)).alias("fits"))


def _misfit(reason: str) -> Column:
    return F.raise_error(F.concat(F.lit(f"{MISFIT}: "), F.col("topic"), F.lit("["),
                                  F.col("partition").cast("string"), F.lit("]@"),
                                  F.col("offset").cast("string"),
                                  F.lit(f" {reason}; the one-pass MERGE stops (nothing "
                                        "committed): expected, not a failure")))


def _rows(state: TableState) -> Callable[[DataFrame], DataFrame]:
    """Guarded changes of `decoded` records: a record the JVM path does not take fails."""
    keys = set(state.key_columns)
    op = F.col("v.op")

    def value(spec: ColumnSpec) -> Column:
        """A delete's row is its key; an upsert's its after image, key columns it lacks
        taken from the key (as the Python decoder does)."""
        after = F.col(f"v.after.`{spec.name}`")
        if spec.name in keys:
            key = F.col(f"k.`{spec.name}`")
            return _converted(F.when(op == "d", key).otherwise(F.coalesce(after, key)), spec)
        return _converted(F.when(op != "d", after), spec)

    def guard(spec: ColumnSpec) -> Column:
        """A converted value that came out null from a non-null one (an ISO text Spark does
        not read) is no value the JVM path takes."""
        after = F.col(f"v.after.`{spec.name}`")
        return (op != "d") & after.isNotNull() & _converted(after, spec).isNull()

    bad_values = [guard(c) for c in state.columns if c.conversion == TS_ISO]
    check = F.when(F.col("value").isNull(), F.lit(False)) \
        .when(~F.col("fits"), _misfit("has a schema (value or key) the table has not taken")) \
        .when(~op.isin(*sorted(OPS)), _misfit("is a truncate or has an unknown op")) \
        .when((op != "d") & F.col("v.after").isNull(), _misfit("has no after image")) \
        .when(F.col("k").isNull(), _misfit("has no key"))
    for bad in bad_values:
        check = check.when(bad, _misfit("has a value Spark does not convert"))
    check = check.otherwise(F.lit(True))

    def build(frame: DataFrame) -> DataFrame:
        return frame.where(check).select(
            "topic", "partition", "offset", op.alias(OP_COLUMN),
            *[value(c).alias(c.name) for c in state.columns],
            *[F.col(f"k.`{k}`").alias(f"__key_{n}")
              for n, k in enumerate(state.key_columns)])

    return build


def _range_metrics(ranges: list[OffsetRange], what: dict[str, Callable[[Column], Column]]
                   ) -> list[Column]:
    out = []
    for n, r in enumerate(ranges):
        mine = (F.col("topic") == r.topic) & (F.col("partition") == r.partition)
        out += [make(mine).alias(f"{name}_{n}") for name, make in what.items()]
    return out


@dataclass(frozen=True)
class JvmRead:
    """The source frame and the observations its MERGE fills (the tasks' counts)."""

    frame: DataFrame
    ranges: list[OffsetRange]
    read: Observation
    kept: Observation

    def meta(self, timeout: float = 60.0) -> list[object]:
        """The `RangeStats` of each range, once the MERGE ran."""
        seen, taken = self._wait(self.read, timeout), self._wait(self.kept, timeout)
        out: list[object] = []
        for n, r in enumerate(self.ranges):
            newest = seen[f"newest_{n}"]
            deletes = int(taken[f"deletes_{n}"])
            out.append(RangeStats(r.topic, r.partition, int(seen[f"records_{n}"]),
                                  int(seen[f"tombstones_{n}"]), 0,
                                  int(taken[f"kept_{n}"]) - deletes, deletes,
                                  None if newest is None else newest / 1e6))
        return out

    @staticmethod
    def _wait(observation: Observation, timeout: float) -> dict[str, Any]:
        """The metrics, which a listener delivers just after the query ends."""
        deadline = time.monotonic() + timeout
        jo: Any = observation._jo  # pyspark 3.5: no get with a timeout
        while not jo.future().isCompleted():
            if time.monotonic() > deadline:
                raise RuntimeError(f"no metrics from the MERGE's source after {timeout:.0f}s")
            time.sleep(0.01)
        return observation.get


def jvm_source(spark: SparkSession, options: dict[str, str], ranges: list[OffsetRange],
               state: TableState, heads: list[bytes], key_heads: list[bytes]) -> JvmRead:
    """The MERGE source of `ranges` for the table as it is: (op, columns...), the last change
    per key."""
    read, kept = Observation(), Observation()
    frame = decoded(kafka_frame(spark, options, ranges), state, heads, key_heads).observe(read, *_range_metrics(
        ranges, {"records": lambda m: F.count(F.when(m, 1)),
                 "tombstones": lambda m: F.count(F.when(
                     m & F.col("value").isNull(), 1)),
                 "newest": lambda m: F.max(F.when(m, F.unix_micros("timestamp")))}))
    rows = _rows(state)(frame)
    columns = [OP_COLUMN, "topic", "partition", *(c.name for c in state.columns)]
    last = rows.groupBy(*(c for c in rows.columns if c.startswith("__key_"))).agg(
        F.max_by(F.struct(*columns), F.col("offset")).alias("c")).select("c.*")
    last = last.observe(kept, *_range_metrics(
        ranges, {"kept": lambda m: F.count(F.when(m, 1)),
                 "deletes": lambda m: F.count(F.when(m & (F.col(OP_COLUMN) == "d"), 1))}))
    return JvmRead(last.select(OP_COLUMN, *(c.name for c in state.columns)), ranges, read, kept)
