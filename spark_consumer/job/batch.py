"""One micro-batch at a time: plan it, read it per table in Spark tasks, MERGE it with its
offsets (the loop and the entry point are in main.py)."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

from pyspark.sql import DataFrame, SparkSession

from spark_consumer.applying.column_ddl import ColumnDdl
from spark_consumer.applying.keyless import keyless_source, null_keyed
from spark_consumer.applying.merge import merge_changes
from spark_consumer.decoding.dbztypes import ColumnSpec, decimal_hints
from spark_consumer.decoding.decode import BadRecord, Shape, Truncate
from spark_consumer.decoding.flattened import refuse_flattened
from spark_consumer.decoding.rekey import key_option
from spark_consumer.iceberg.layout import Layouts
from spark_consumer.iceberg.offsets import (
    OFFSETS_PROPERTY,
    PARTITIONS_PROPERTY,
    TOPIC_IDS_PROPERTY,
    Offsets,
    commit_offsets_only,
    commit_properties,
    committed_summary,
    decode_offsets,
    decode_partition_counts,
    decode_topic_ids,
    encode_offsets,
    encode_partition_counts,
    encode_topic_ids,
)
from spark_consumer.iceberg.tables import (
    TableRef,
    TableState,
    add_columns,
    change_key,
    load_table,
    promote_columns,
    table_for_topic,
)
from spark_consumer.job.deadletter import DeadLetters
from spark_consumer.job.lag import lag_records, lag_seconds
from spark_consumer.job.metrics import JobMetrics
from spark_consumer.job.options import JobOptions
from spark_consumer.job.progress import BatchResult, changes_merged
from spark_consumer.reading.javakafka import java_options
from spark_consumer.reading.jvmsource import (
    SchemaVerdicts,
    jvm_misfit,
    jvm_source,
    kafka_frame,
    takes_columns,
)
from spark_consumer.reading.keys import KeyChange, cut_at, next_key
from spark_consumer.reading.planner import (
    TP,
    OffsetRange,
    low_watermarks,
    partitions_of,
    plan_ranges,
    resolve_topics,
    topic_ids,
    true_ends,
)
from spark_consumer.reading.reader import RangeStats
from spark_consumer.reading.resume import (
    PartitionState,
    check_collisions,
    check_partition_count,
    resume_offset,
)
from spark_consumer.reading.source import (
    Side,
    direct_source,
    fits,
    misfit,
    read_source,
    side_results,
)

log = logging.getLogger("spark_consumer")


class Job:
    """State kept between micro-batches: table states and the offsets committed so far."""

    def __init__(self, spark: SparkSession, opts: JobOptions) -> None:
        self.spark = spark
        self.opts = opts
        self.kafka = opts.kafka_settings()
        self.tables: dict[TableRef, TableState | None] = {}
        self.offsets: dict[TableRef, Offsets] = {}
        self.topic_ids: dict[TableRef, dict[str, str]] = {}
        self.current_ids: dict[str, str] = {}
        self.partition_counts: dict[TableRef, dict[str, int]] = {}
        self.batches = 0
        self.dead_letter = DeadLetters(opts.dead_letter)
        self.sides: dict[TableRef, Side] = {}
        self.commit_seconds: dict[TableRef, float] = {}  # of this batch's commits
        self.metrics = JobMetrics(opts.metrics_port)
        self.layouts = Layouts(spark, opts.partition_by, opts.sort_by, opts.catalog_name,
                               opts.namespace)
        self.column_ddl = ColumnDdl(spark, self.kafka)
        self.java_kafka = java_options(self.kafka) if opts.kafka_reader == "spark" else None
        self.verdicts = SchemaVerdicts()

    @property
    def dead_letters(self) -> int:
        return self.dead_letter.count

    def table_for(self, topic: str) -> TableRef:
        return table_for_topic(topic, self.opts.catalog_name, self.opts.namespace)

    def _state(self, ref: TableRef) -> TableState | None:
        """The table (loaded once it exists) and the offsets and topic ids it committed."""
        state = self.tables.get(ref)
        if state is None:
            state = load_table(self.spark, ref)
            self.tables[ref] = state
            if state is not None:
                self.layouts.apply(state)  # at start: the options evolve an existing table
                summary = committed_summary(self.spark, str(ref))
                self.offsets[ref] = decode_offsets(summary.get(OFFSETS_PROPERTY))
                self.topic_ids[ref] = decode_topic_ids(summary.get(TOPIC_IDS_PROPERTY))
                self.partition_counts[ref] = decode_partition_counts(
                    summary.get(PARTITIONS_PROPERTY))
        return state

    def reload_tables(self) -> None:
        """Forget the tables as loaded: the next batch reads their states and offsets from
        Iceberg again (another writer, spark-apply or a query, may have committed since)."""
        self.tables.clear()

    def starts(self, tps: list[TP], ends: dict[TP, int]) -> dict[TP, int]:
        """Where each partition resumes: the table's committed offsets, checked against the
        topic as it is now (TopicRecreatedError for offsets of an earlier topic)."""
        lows = low_watermarks(self.kafka, tps)
        out: dict[TP, int] = {}
        for topic, partition in tps:
            ref = self.table_for(topic)
            self._state(ref)
            stored = self.offsets.get(ref, {}).get(topic, {})
            state = PartitionState(topic, partition, stored.get(partition),
                                   self.topic_ids.get(ref, {}).get(topic),
                                   self.current_ids.get(topic), lows[(topic, partition)],
                                   ends[(topic, partition)])
            start = resume_offset(state, topic in self.opts.restart_topics)
            if start != state.stored and state.stored is not None:
                self.offsets[ref][topic] = {}  # offsets of the old topic are dropped
            out[(topic, partition)] = start
        return out

    def plan(self, targets: dict[TP, int] | None) -> tuple[list[OffsetRange], dict[TP, int]]:
        """The ranges of the next batch and the true ends, capped by `targets` (--once: the
        ends at its start; a streaming micro-batch: its ends) but never below the start."""
        topics = resolve_topics(self.kafka, self.opts.topics, self.opts.topic_pattern)
        check_collisions((t, str(self.table_for(t))) for t in topics)
        self.current_ids.update(topic_ids(self.kafka, topics))
        parts = partitions_of(self.kafka, topics)
        tps = [(t, p) for t in topics for p in parts[t]]
        ends = true_ends(self.kafka, tps)
        starts = self.starts(tps, ends)
        self._check_partitions(parts)
        if targets is not None:
            ends = {tp: min(end, max(targets.get(tp, 0), starts[tp]))
                    for tp, end in ends.items()}
        return plan_ranges(starts, ends, self.opts.max_offsets_per_batch), ends

    def _check_partitions(self, parts: dict[str, list[int]]) -> None:
        """Each topic's partition count, checked against the table's last commit (a topic
        recreated under --restart-topics starts afresh); --partitions-added commits the new
        count at once, so a later run goes on without the flag."""
        for topic, ids in parts.items():
            ref = self.table_for(topic)
            counts = self.partition_counts.setdefault(ref, {})
            known = None if topic in self.opts.restart_topics else counts.get(topic)
            accepted = topic in self.opts.partitions_added
            check_partition_count(topic, str(ref), known, len(ids), accepted)
            if not ids or counts.get(topic) == len(ids):
                continue
            counts[topic] = len(ids)
            if accepted and known is not None and self._state(ref) is not None:
                commit_offsets_only(self.spark, str(ref), self._summary(
                    ref, self.offsets.get(ref, {}), self.topic_ids.get(ref, {})))

    def run_batch(self, ranges: list[OffsetRange], ends: dict[TP, int]) -> BatchResult:
        """Per table: read its ranges, evolve/create it, MERGE with offsets in the commit."""
        began = time.monotonic()
        self.batches += 1
        by_table: dict[TableRef, list[OffsetRange]] = {}
        for rng in ranges:
            if rng.size > 0:
                by_table.setdefault(self.table_for(rng.topic), []).append(rng)
        tables = sorted(by_table.items(), key=lambda kv: str(kv[0]))
        states = {ref: self._state(ref) for ref, _ in tables}
        self.column_ddl.refresh(r.topic for r in ranges)
        for ref, _ in tables:
            self.sides.setdefault(ref, side_results(self.spark))
        # Each table runs its own Spark jobs: run together, they share the cores as the
        # tasks of one job would. Commit properties are per thread.
        with ThreadPoolExecutor(self.spark.sparkContext.defaultParallelism) as pool:
            applied = list(pool.map(lambda n, t: self._table(t[0], t[1], states[t[0]], n),
                                    range(len(tables)), tables))
        result, now, at = BatchResult(), time.time(), self._positions(ranges)
        for (ref, _), (meta, bad, merged) in zip(tables, applied, strict=True):
            mine = {tp: offset for tp, offset in at.items() if self.table_for(tp[0]) == ref}
            lag = lag_records(mine, ends), lag_seconds(meta, now) if merged else None
            result.add(str(ref), meta, bad, merged, lag, self.commit_seconds.pop(ref, 0.0))
        result.lag, result.seconds = lag_records(at, ends), time.monotonic() - began
        self.metrics.observe(result)
        return result

    def _positions(self, ranges: list[OffsetRange]) -> dict[TP, int]:
        """Where each partition of the batch goes on from: its table's offsets as the batch
        left them (a range cut at a key change or column DDL ends short), else its start."""
        out: dict[TP, int] = {}
        for r in ranges:
            done = self.offsets.get(self.table_for(r.topic), {}).get(r.topic, {}).get(r.partition)
            out[(r.topic, r.partition)] = r.start if done is None else max(r.start, done)
        return out

    def _table(self, ref: TableRef, rngs: list[OffsetRange], state: TableState | None,
               number: int) -> tuple[list[object], int, bool]:
        """One table's part of the batch: in one pass when it fits the table as it is, else
        read first, evolve or dead-letter, and MERGE what was read. Returns the tasks' side
        results, the bad records and whether the table took the batch."""
        view = f"gtidmark_src_{self.batches}_{number}"
        state, rngs = self.column_ddl.follow(state, rngs)  # source drops and renames
        self.tables[ref] = state
        rekey = key_option((r.topic for r in rngs), self.opts.keys)
        if rekey and state is not None and state.key_columns != rekey:
            state = self.tables[ref] = change_key(self.spark, state, rekey, "--key")
        if state is not None and state.key_columns:
            done = self._one_pass(ref, rngs, state, view, rekey)
            if done is not None:
                return done, 0, True
            log.info("table %s: the batch does not fit the table as it is (new columns, "
                     "wider types, bad records, a truncate or a key change); reading it "
                     "first", ref)
        source, meta = self._read(ref, rngs, state)
        state, source, meta = self._keyed(ref, rngs, state, source, meta)
        state, source, meta = self._fitting(ref, rngs, state, source, meta)
        rngs = cut_at(rngs, (m for m in meta if isinstance(m, KeyChange)))
        bad = sorted((m for m in meta if isinstance(m, BadRecord)),
                     key=lambda b: (b.topic, b.partition, b.offset))
        refuse_flattened(bad)
        self.dead_letter.write(bad)  # before the offsets that pass them are committed
        truncates = [m for m in meta if isinstance(m, Truncate)]
        if truncates and state is not None:
            self._truncate(ref, rngs, state, truncates)
        if state is None:
            # Nothing to create the table from (deletes only, or every record bad): the
            # job moves on; without a table to commit to, a restart reads them again.
            log.warning("table %s does not exist and the batch has no change to create it "
                        "from; %d records of %s skipped", ref,
                        sum(m.records for m in meta if isinstance(m, RangeStats)),
                        ", ".join(sorted({r.topic for r in rngs})))
            self.offsets[ref] = self._offsets_after(ref, rngs)
            return meta, len(bad), False
        self._commit(ref, rngs, state, source, view, merge=changes_merged(meta) > 0)
        return meta, len(bad), True

    def _one_pass(self, ref: TableRef, rngs: list[OffsetRange], state: TableState, view: str,
                  rekey: list[str] | None) -> list[object] | None:
        """The batch MERGEd in one pass, its source read by the MERGE itself: in the JVM
        (Spark's Kafka source) when the settings and columns allow, else by the Python
        reader; the tasks' side results, or None when a record does not fit (nothing
        committed)."""
        if rekey is None and self.java_kafka is not None and takes_columns(state.columns):
            return self._jvm_pass(ref, rngs, state, view, self.java_kafka)
        direct = direct_source(self.spark, self.sides[ref], self.kafka,
                               self._known(rngs, state), rngs, state.columns,
                               state.key_columns, rekey)
        try:
            self._commit(ref, rngs, state, direct.frame, view, merge=True)
        except Exception as exc:
            if not misfit(exc):
                raise
            return None
        return direct.meta()

    def _jvm_pass(self, ref: TableRef, rngs: list[OffsetRange], state: TableState, view: str,
                  options: dict[str, str]) -> list[object] | None:
        """The JVM one pass; a schema not judged yet is judged (one more read) and the MERGE
        tried again if the table takes it."""
        for _ in range(2):
            heads, keys = self.verdicts.accepted(state, "v"), self.verdicts.accepted(state, "k")
            if heads and keys:
                read = jvm_source(self.spark, options, rngs, state, heads, keys)
                try:
                    self._commit(ref, rngs, state, read.frame, view, merge=True)
                except Exception as exc:
                    if not jvm_misfit(exc):
                        raise
                else:
                    return read.meta()
            if not self.verdicts.learn(state, kafka_frame(self.spark, options, rngs)):
                return None
        return None

    def _truncate(self, ref: TableRef, rngs: list[OffsetRange], state: TableState,
                  truncates: list[Truncate]) -> None:
        """Empty the table in a commit of its own whose offsets pass each partition's last
        truncate (and nothing else of the batch): the changes read after it then MERGE on
        top, and a rerun reads on from there, so the table is emptied once."""
        offsets = {t: dict(ps) for t, ps in self.offsets.get(ref, {}).items()}
        for rng in rngs:
            offsets.setdefault(rng.topic, {}).setdefault(rng.partition, rng.start)
        for t in truncates:
            at = offsets[t.topic]
            at[t.partition] = max(at[t.partition], t.offset + 1)
        ids = dict(self.topic_ids.get(ref, {}))
        ids.update({r.topic: self.current_ids[r.topic] for r in rngs
                    if r.topic in self.current_ids})
        props = self._summary(ref, offsets, ids)
        log.info("table %s: emptied by the truncate at %s", ref,
                 ", ".join(f"{t.topic}[{t.partition}]@{t.offset}" for t in truncates))
        with commit_properties(self.spark, props):
            self.spark.sql(f"DELETE FROM {state.ref.sql}")
        if committed_summary(self.spark, str(ref)) != props:
            commit_offsets_only(self.spark, str(ref), props)
        self.offsets[ref] = offsets
        self.topic_ids[ref] = ids

    def _known(self, rngs: list[OffsetRange],
               state: TableState | None) -> dict[str, dict[str, ColumnSpec]]:
        """Per topic, the column types its values decode to: hints, then the table's."""
        return {r.topic: {**decimal_hints(r.topic, self.opts.decimal_columns),
                          **(state.by_name() if state is not None else {})} for r in rngs}

    def _read(self, ref: TableRef, rngs: list[OffsetRange],
              state: TableState | None) -> tuple[DataFrame, list[object]]:
        """The MERGE source of `rngs` for the table as it is now, and the tasks' side results;
        a table without a key (or a new one whose records have none) gets its row steps."""
        rekey = key_option((r.topic for r in rngs), self.opts.keys)
        if rekey is None and (null_keyed(self.kafka, rngs) if state is None
                              else not state.key_columns):
            return keyless_source(self.spark, self.sides[ref], self.kafka,
                                  self._known(rngs, state), rngs,
                                  state.columns if state is not None else None)
        return read_source(self.spark, self.sides[ref], self.kafka, self._known(rngs, state),
                           rngs, state.columns if state is not None else None,
                           state.key_columns if state is not None else None, rekey)

    def _keyed(self, ref: TableRef, rngs: list[OffsetRange], state: TableState | None,
               source: DataFrame, meta: list[object]
               ) -> tuple[TableState | None, DataFrame, list[object]]:
        """When the batch starts where the source key changed (every record on the old key
        applied), switch the table's merge key to the new one and read again."""
        while state is not None:
            change = next_key(m for m in meta if isinstance(m, KeyChange))
            if change is None or any(m.records > 0 for m in meta if isinstance(m, RangeStats)):
                break
            state = change_key(self.spark, state, list(change.key_columns),
                               f"{change.topic}[{change.partition}]@{change.offset}")
            self.tables[ref] = state
            source, meta = self._read(ref, rngs, state)
        return state, source, meta

    def _fitting(self, ref: TableRef, rngs: list[OffsetRange], state: TableState | None,
                 source: DataFrame, meta: list[object]
                 ) -> tuple[TableState | None, DataFrame, list[object]]:
        """If the events read do not fit the table, evolve (or create) it and read again."""
        shapes = [m for m in meta if isinstance(m, Shape)]
        while state is None or not fits(state.columns, shapes):
            evolved = self._prepare(ref, shapes)
            if evolved is None:
                break
            if evolved == state:
                raise RuntimeError(f"table {ref}: the events do not fit it after evolving it")
            state = evolved
            source, meta = self._read(ref, rngs, state)
            shapes = [m for m in meta if isinstance(m, Shape)]
        return state, source, meta

    def _offsets_after(self, ref: TableRef, rngs: list[OffsetRange]) -> Offsets:
        """The table's offsets once `rngs` are applied."""
        offsets = {t: dict(ps) for t, ps in self.offsets.get(ref, {}).items()}
        for rng in rngs:
            offsets.setdefault(rng.topic, {})[rng.partition] = rng.end
        return offsets

    def _commit(self, ref: TableRef, rngs: list[OffsetRange], state: TableState,
                source: DataFrame, view: str, merge: bool) -> None:
        """MERGE `source` (when `merge`) with the batch's offsets and topic ids in its commit;
        an empty commit carries them when the MERGE made none."""
        offsets = self._offsets_after(ref, rngs)
        ids = dict(self.topic_ids.get(ref, {}))
        ids.update({r.topic: self.current_ids[r.topic] for r in rngs
                    if r.topic in self.current_ids})
        props, began = self._summary(ref, offsets, ids), time.monotonic()
        if merge:
            log.info("table %s: MERGE started", ref)
            with commit_properties(self.spark, props):
                merge_changes(self.spark, state, source, view)
        if committed_summary(self.spark, str(ref)) != props:
            commit_offsets_only(self.spark, str(ref), props)
        self.commit_seconds[ref] = time.monotonic() - began
        self.offsets[ref] = offsets
        self.topic_ids[ref] = ids

    def _summary(self, ref: TableRef, offsets: Offsets, ids: dict[str, str]) -> dict[str, str]:
        """The properties a commit of the job carries in its snapshot summary."""
        return {OFFSETS_PROPERTY: encode_offsets(offsets),
                TOPIC_IDS_PROPERTY: encode_topic_ids(ids),
                PARTITIONS_PROPERTY: encode_partition_counts(self.partition_counts.get(ref, {}))}

    def _prepare(self, ref: TableRef, shapes: list[Shape]) -> TableState | None:
        """Create the table on first sight, add the columns new events carry."""
        state = self._state(ref)
        if state is None:
            if not shapes:
                return None
            first = shapes[0]
            if not all(s.typed for s in shapes):
                log.warning("table %s is created from schemaless JSON: column types are guessed "
                            "from values, and a precise DECIMAL (base64 text) becomes a string "
                            "column unless named in --decimal-column", ref)
            state = self.layouts.create(ref, list(first.columns), list(first.key_columns))
        specs = [c for s in shapes for c in s.columns]
        state = promote_columns(self.spark, state, specs)
        new = state.missing(specs)
        if new:
            state = add_columns(self.spark, state, new)
        self.tables[ref] = state
        return state
