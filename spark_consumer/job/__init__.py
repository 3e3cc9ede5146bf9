"""`gtidmark spark-apply`: arguments (`options`), the Spark session, the loop (`main`) of
micro-batches (`batch`), their progress, lag and metrics, the dead-letter file and secrets
kept out of logs; `streaming` applies a Structured Streaming query's micro-batches the same
way."""
