"""Column type changes: widened source columns become Iceberg type promotions, never rounding.

Iceberg promotes int -> bigint, float -> double and decimal(p,s) -> decimal(p',s) with p' > p.
A value of a narrower type than the column (an older event) fits as it is. Any other change
(a larger decimal scale, int -> string, ...) would lose or round values: the job stops.
"""

from __future__ import annotations

from spark_consumer.decoding.dbztypes import MAX_DECIMAL_PRECISION, decimal_type

_WIDER = {"int": "bigint", "float": "double"}


class TypeChangeError(RuntimeError):
    """A column's type changed in a way Iceberg cannot promote (message: one line)."""


def promoted_type(table: str, column: str, current: str, incoming: str) -> str | None:
    """The type to promote `column` to so `incoming` values fit; None when they fit already."""
    if current == incoming:
        return None
    if _WIDER.get(incoming) == current:
        return None
    if _WIDER.get(current) == incoming:
        return incoming
    have, want = decimal_type(current), decimal_type(incoming)
    if have is not None and want is not None:
        (precision, scale), (new_precision, new_scale) = have, want
        if new_scale <= scale:
            needed = max(precision, new_precision - new_scale + scale)
            if needed == precision:
                return None  # every incoming value is exact in the current column
            if needed <= MAX_DECIMAL_PRECISION:
                return f"decimal({needed},{scale})"
    raise TypeChangeError(
        f"table {table} column {column}: type changed from {current} to {incoming}, which "
        f"Iceberg cannot promote without losing or rounding values; migrate the column "
        f"(e.g. a new table) and rerun")
