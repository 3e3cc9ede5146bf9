"""gtidmark: Debezium-compatible CDC from a MySQL/MariaDB read replica, with read-only snapshots."""

from importlib.metadata import PackageNotFoundError, version

try:  # pyproject.toml's version, as installed (`make setup`: pip install -e)
    __version__ = version("gtidmark")
except PackageNotFoundError:  # a source tree never installed
    __version__ = "0.0.0+unknown"
