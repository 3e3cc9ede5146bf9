"""Iceberg tables of the job: naming from topics, creation, schema evolution, column specs.

Key columns and non-obvious value conversions (e.g. a timestamp that arrives as epoch
microseconds) are kept as table properties so schemaless events can be typed later.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from spark_consumer.decoding.dbztypes import PLAIN, ColumnSpec
from spark_consumer.iceberg.evolution import promoted_type

log = logging.getLogger(__name__)

KEY_PROPERTY = "gtidmark.key"
CONVERSIONS_PROPERTY = "gtidmark.conversions"
TABLE_PROPERTIES = {
    "format-version": "2",
    "write.merge.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.delete.mode": "merge-on-read",
}


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def literal(text: str) -> str:
    """A Spark SQL string literal holding exactly `text` (source names may contain quotes)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def tblproperties(props: dict[str, str]) -> str:
    return ", ".join(f"{literal(k)}={literal(v)}" for k, v in props.items())


@dataclass(frozen=True)
class TableRef:
    """catalog.namespace.table of one Iceberg table."""

    catalog: str
    namespace: str
    name: str

    @property
    def sql(self) -> str:
        return ".".join(quote(p) for p in (self.catalog, self.namespace, self.name))

    def __str__(self) -> str:
        return f"{self.catalog}.{self.namespace}.{self.name}"


def table_for_topic(topic: str, catalog: str, namespace: str | None) -> TableRef:
    """`<prefix>.<db>.<table>` -> catalog.<db>.<table> (or catalog.<namespace>.<table>)."""
    parts = topic.split(".")
    ns = namespace or (parts[-2] if len(parts) >= 2 else "default")
    return TableRef(catalog, ns, parts[-1])


@dataclass
class TableState:
    """What the job knows about one existing table: its columns (in order) and key columns."""

    ref: TableRef
    columns: list[ColumnSpec]
    key_columns: list[str]
    exists: bool = True
    _names: set[str] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        self._names = {c.name for c in self.columns}

    def by_name(self) -> dict[str, ColumnSpec]:
        return {c.name: c for c in self.columns}

    def missing(self, specs: Iterable[ColumnSpec]) -> list[ColumnSpec]:
        out: list[ColumnSpec] = []
        for spec in specs:
            if spec.name not in self._names and all(s.name != spec.name for s in out):
                out.append(spec)
        return out


def load_table(spark: SparkSession, ref: TableRef) -> TableState | None:
    """The table's state, or None when it does not exist yet."""
    try:
        schema = spark.table(ref.sql).schema
        props = {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {ref.sql}").collect()}
    except AnalysisException:
        return None
    conversions = json.loads(props.get(CONVERSIONS_PROPERTY, "{}"))
    columns = [_spec(f.name, f.dataType.simpleString(), conversions.get(f.name, PLAIN))
               for f in schema.fields]
    return TableState(ref, columns, json.loads(props.get(KEY_PROPERTY, "[]")))


def _spec(name: str, spark_type: str, conversion: str) -> ColumnSpec:
    kind, _, scale = conversion.partition(":")
    return ColumnSpec(name, spark_type, kind, scale=int(scale) if scale else None)


def _conversions(columns: Iterable[ColumnSpec]) -> str:
    """name -> conversion (`decimal_b64:<scale>` where the column type does not say the scale)."""
    return json.dumps({c.name: c.conversion if c.scale is None or c.spark_type != "string"
                       else f"{c.conversion}:{c.scale}"
                       for c in columns if c.conversion != PLAIN}, sort_keys=True)


def create_table(spark: SparkSession, ref: TableRef, columns: list[ColumnSpec],
                 key_columns: list[str], partitioned_by: str = "") -> TableState:
    """CREATE TABLE (format v2, merge-on-read) with the columns of the first events seen."""
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {quote(ref.catalog)}.{quote(ref.namespace)}")
    cols = ", ".join(f"{quote(c.name)} {c.spark_type}" for c in columns)
    props = dict(TABLE_PROPERTIES)
    props[KEY_PROPERTY] = json.dumps(key_columns)
    props[CONVERSIONS_PROPERTY] = _conversions(columns)
    spark.sql(f"CREATE TABLE IF NOT EXISTS {ref.sql} ({cols}) USING iceberg {partitioned_by} "
              f"TBLPROPERTIES ({tblproperties(props)})")
    log.info("created table %s (%s) key %s", ref, cols, key_columns)
    state = load_table(spark, ref)
    assert state is not None
    return state


def add_columns(spark: SparkSession, state: TableState, new: list[ColumnSpec]) -> TableState:
    """ALTER TABLE ADD COLUMNS for columns the events have and the table lacks."""
    cols = ", ".join(f"{quote(c.name)} {c.spark_type}" for c in new)
    spark.sql(f"ALTER TABLE {state.ref.sql} ADD COLUMNS ({cols})")
    merged = state.columns + new
    props = tblproperties({CONVERSIONS_PROPERTY: _conversions(merged)})
    spark.sql(f"ALTER TABLE {state.ref.sql} SET TBLPROPERTIES ({props})")
    log.info("table %s: added columns %s", state.ref, cols)
    return TableState(state.ref, merged, state.key_columns)


def change_key(spark: SparkSession, state: TableState, key_columns: list[str],
               where: str) -> TableState:
    """The table's merge key from now on: the source's primary key changed at `where`."""
    props = tblproperties({KEY_PROPERTY: json.dumps(key_columns)})
    spark.sql(f"ALTER TABLE {state.ref.sql} SET TBLPROPERTIES ({props})")
    log.info("table %s: the source key changed from %s to %s at %s; changes from there on "
             "merge on the new key", state.ref, state.key_columns, key_columns, where)
    return TableState(state.ref, state.columns, key_columns)


def promote_columns(spark: SparkSession, state: TableState,
                    specs: Iterable[ColumnSpec]) -> TableState:
    """ALTER COLUMN ... TYPE for columns the events widened (TypeChangeError if impossible)."""
    columns = state.by_name()
    changed = False
    for spec in specs:
        current = columns.get(spec.name)
        if current is None:
            continue
        wider = promoted_type(str(state.ref), spec.name, current.spark_type, spec.spark_type)
        if wider is None:
            continue
        spark.sql(f"ALTER TABLE {state.ref.sql} ALTER COLUMN {quote(spec.name)} TYPE {wider}")
        log.info("table %s: column %s widened from %s to %s", state.ref, spec.name,
                 current.spark_type, wider)
        columns[spec.name] = ColumnSpec(spec.name, wider, current.conversion, current.optional,
                                        current.scale)
        changed = True
    if not changed:
        return state
    return TableState(state.ref, [columns[c.name] for c in state.columns], state.key_columns)
