"""The compiled module, or one line saying how to build it (no Python fall-back)."""

from __future__ import annotations

try:
    from connector._native import AvroRecords, AvroRows, RowImages, RowWriter, TableRecords
except ImportError as exc:  # pragma: no cover - a checkout where `make setup` did not run
    raise ImportError(f"connector._native is not built ({exc}): run `make native` "
                      "(part of `make setup`; needs Rust's cargo)") from exc

__all__ = ["AvroRecords", "AvroRows", "RowImages", "RowWriter", "TableRecords"]
