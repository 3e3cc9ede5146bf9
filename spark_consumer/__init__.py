"""PySpark job applying Debezium change topics to Iceberg tables, exactly once."""
