"""PySpark job applying Debezium change topics to Iceberg tables, exactly once.

Its parts, each a layer that imports only the ones listed before it:

- `decoding`: a change record's bytes to typed changes (row by row, orjson columnar,
  Arrow's JSON reader), Debezium types to Spark's, --key re-keying, flattened topics refused.
- `iceberg`: the job's tables (creation, schema evolution and type promotion, layout), the
  Kafka offsets kept in their commits, and their maintenance between batches.
- `reading`: which offset ranges a batch reads and where partitions resume (driver), and the
  MERGE source that reads them, in the executors' Python or Spark's Kafka source.
- `applying`: a batch into its table: MERGE by key, whole-row apply of keyless tables, and
  source column drops and renames from the schema-change topic.
- `job`: `gtidmark spark-apply`: options, the Spark session, the loop of batches, progress,
  lag and metrics, the dead-letter file.

At the top, only what users run: `python -m spark_consumer` (the job), `python -m
spark_consumer.jars` (the jars a session needs) and `python -m spark_consumer.package`
(what spark-submit ships to a cluster).
"""
