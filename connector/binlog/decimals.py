"""NEWDECIMAL's binary form as mysql-replication reads it (MySQL's JSON opaque decimals)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Context, Decimal

_COMPRESSED_BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def decimal_reader(precision: int, scale: int) -> Callable[[bytes, int], tuple[Decimal, int]]:
    """NEWDECIMAL as the library reads it: the Decimal of the same digits, with `scale` of
    them after the point, built from one integer instead of text."""
    integral = precision - scale
    whole_int, part_int = divmod(integral, 9)
    whole_frac, part_frac = divmod(scale, 9)
    head, tail = _COMPRESSED_BYTES[part_int], _COMPRESSED_BYTES[part_frac]
    size = head + 4 * (whole_int + whole_frac) + tail
    groups = ([(head, part_int)] if head else []) + [(4, 9)] * (whole_int + whole_frac) + \
        ([(tail, part_frac)] if tail else [])
    spans = []  # (bit shift, mask, decimal multiplier), least significant group first
    shift, multiplier = 0, 1
    for width, digits in reversed(groups):
        spans.append((shift, (1 << 8 * width) - 1, multiplier))
        shift, multiplier = shift + 8 * width, multiplier * 10 ** digits
    sign_bit, everything = 1 << (8 * size - 1), (1 << 8 * size) - 1
    negative_zero = Decimal("-0." + "0" * scale if scale else "-0")
    exact = Context(prec=2 * precision + 2)

    def read(data: bytes, pos: int) -> tuple[Decimal, int]:
        x = int.from_bytes(data[pos:pos + size], "big")
        negative = not x & sign_bit
        x ^= everything ^ sign_bit if negative else sign_bit  # negatives are stored inverted
        n = 0
        for at, mask, times in spans:
            n += ((x >> at) & mask) * times
        if negative:
            if not n:
                return negative_zero, pos + size
            n = -n
        return Decimal(n).scaleb(-scale, exact), pos + size

    return read
