"""Binlog side of the pipeline: the reader thread, DDL recognition, schema history."""
