"""Iceberg table layout from --partition-by / --sort-by: set when the job creates a table,
evolved (partition evolution, WRITE ORDERED BY) when the option changed for one that exists.

Evolution is metadata only: files already written keep the spec they were written with.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession

from spark_consumer.decoding.dbztypes import ColumnSpec
from spark_consumer.iceberg.layout_spec import (
    Field,
    SortField,
    SpecError,
    check_columns,
    iceberg_field,
)
from spark_consumer.iceberg.tables import (
    TableRef,
    TableState,
    create_table,
    quote,
    table_for_topic,
    tblproperties,
)

log = logging.getLogger(__name__)

# Rows clustered by partition before the write: one file per partition and batch, not
# one per task and partition (Iceberg's default for a sorted table is a sampled range).
DISTRIBUTION = {"write.distribution-mode": "hash", "write.merge.distribution-mode": "hash"}


class LayoutError(SpecError):
    """A layout option that does not fit its table: the job exits 2 with this line."""


@dataclass(frozen=True)
class Wanted:
    """The layout options of one table (None: that option was not given for it)."""

    source: str  # DB.TABLE as given
    partition: tuple[Field, ...] | None
    order: tuple[SortField, ...] | None


class Layouts:
    """The layout options by Iceberg table, applied to each table once per run."""

    def __init__(self, spark: SparkSession, partition_by: dict[str, tuple[Field, ...]],
                 sort_by: dict[str, tuple[SortField, ...]], catalog: str,
                 namespace: str | None) -> None:
        self.spark = spark
        self.wanted: dict[TableRef, Wanted] = {}
        for source in sorted({*partition_by, *sort_by}):
            ref = table_for_topic("_." + source, catalog, namespace)
            if ref in self.wanted:
                raise LayoutError(f"--partition-by/--sort-by: {self.wanted[ref].source} and "
                                  f"{source} are both table {ref} (--namespace)")
            self.wanted[ref] = Wanted(source, partition_by.get(source), sort_by.get(source))

    def create(self, ref: TableRef, columns: list[ColumnSpec],
               key_columns: list[str]) -> TableState:
        """CREATE TABLE partitioned as its option says (checked first), then its sort order."""
        wanted = self.wanted.get(ref)
        clause = ""
        if wanted is not None:
            self._check(wanted, {c.name: c.spark_type for c in columns})
            if wanted.partition:
                clause = f"PARTITIONED BY ({', '.join(f.sql() for f in wanted.partition)})"
        state = create_table(self.spark, ref, columns, key_columns, clause)
        self.apply(state)
        return state

    def apply(self, state: TableState) -> None:
        """Evolve the table to its options: one log line per change; LayoutError if they do
        not fit its columns."""
        wanted = self.wanted.get(state.ref)
        if wanted is None:
            return
        self._check(wanted, {c.name: c.spark_type for c in state.columns})
        table = _iceberg_table(self.spark, state.ref)
        if wanted.partition is not None:
            self._partition(state.ref, _spec(table), list(wanted.partition))
        if wanted.order is not None and _order(table) != list(wanted.order):
            if wanted.order:
                terms = ", ".join(f.sql() for f in wanted.order)
                self.spark.sql(f"ALTER TABLE {state.ref.sql} WRITE ORDERED BY {terms}")
                log.info("table %s: sort order now %s (earlier files keep theirs)", state.ref,
                         terms)
            else:
                self.spark.sql(f"ALTER TABLE {state.ref.sql} WRITE UNORDERED")
                log.info("table %s: sort order removed", state.ref)
        props = {r["key"]: r["value"]
                 for r in self.spark.sql(f"SHOW TBLPROPERTIES {state.ref.sql}").collect()}
        unset = {k: v for k, v in DISTRIBUTION.items() if props.get(k) != v}
        if unset:
            self.spark.sql(f"ALTER TABLE {state.ref.sql} SET TBLPROPERTIES "
                           f"({tblproperties(unset)})")
            log.info("table %s: %s", state.ref, ", ".join(f"{k}={v}" for k, v in unset.items()))

    def _check(self, wanted: Wanted, types: dict[str, str]) -> None:
        try:
            check_columns(wanted.source, list(wanted.partition or ()), types, "--partition-by")
            check_columns(wanted.source, [s.field for s in wanted.order or ()], types,
                          "--sort-by")
        except SpecError as exc:
            raise LayoutError(str(exc)) from None

    def _partition(self, ref: TableRef, current: dict[Field, str], wanted: list[Field]) -> None:
        """ADD/DROP/REPLACE PARTITION FIELD until the spec holds `wanted` (order aside); a
        field of a column that only changed transform is one REPLACE."""
        dropped = [f for f in current if f not in wanted]
        added = [f for f in wanted if f not in current]
        for old in dropped:
            new = next((f for f in added if f.column == old.column), None)
            if new is not None:
                added.remove(new)
                self.spark.sql(f"ALTER TABLE {ref.sql} REPLACE PARTITION FIELD "
                               f"{quote(current[old])} WITH {new.sql()}")
                log.info("table %s: partition field %s replaced by %s (earlier files keep %s)",
                         ref, old, new, old)
            else:
                self.spark.sql(f"ALTER TABLE {ref.sql} DROP PARTITION FIELD "
                               f"{quote(current[old])}")
                log.info("table %s: partition field %s dropped", ref, old)
        for new in added:
            self.spark.sql(f"ALTER TABLE {ref.sql} ADD PARTITION FIELD {new.sql()}")
            log.info("table %s: partition field %s added (earlier files keep their "
                     "partitioning)", ref, new)


def _iceberg_table(spark: SparkSession, ref: TableRef) -> Any:
    """The Iceberg Java table (its spec and sort order as Iceberg holds them)."""
    jvm: Any = spark.sparkContext._jvm
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, ref.sql)
    table.refresh()
    return table


def _spec(table: Any) -> dict[Field, str]:
    """The current partition fields (void ones left out) -> their partition field names."""
    schema = table.schema()
    out: dict[Field, str] = {}
    for field in table.spec().fields():
        transform = str(field.transform().toString())
        if transform != "void":
            out[iceberg_field(transform, str(schema.findColumnName(field.sourceId())))] = \
                str(field.name())
    return out


def _order(table: Any) -> list[SortField]:
    """The current sort order as sort fields."""
    schema = table.schema()
    return [SortField(iceberg_field(str(f.transform().toString()),
                                    str(schema.findColumnName(f.sourceId()))),
                      str(f.direction().name()) == "DESC",
                      str(f.nullOrder().name()) == "NULLS_FIRST")
            for f in table.sortOrder().fields()]
