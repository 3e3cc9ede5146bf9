"""gtidmark: Debezium-compatible CDC from a MySQL/MariaDB read replica, with read-only snapshots."""

__version__ = "0.1.0"
