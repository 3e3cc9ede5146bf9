"""Java 17's `Float.toString`, digit for digit: how Kafka Connect's JsonConverter writes a
FLOAT (a Connect float32) in Debezium's records.

Java before 19 (JDK-4511638) does not always write the shortest decimal that reads back as
the same float: in E-notation (below 1e-3, from 1e7) about one value in eight gets a digit
more, e.g. 3.0E10f is written 3.0000001E10, and 5.6E11f (560000008192) 5.6000001E11. Read
as a double, such a text is another number than the shortest one, so the converter writes
these digits too. A port of jdk.internal.math.FloatingDecimal's binary-to-ASCII path for
floats (`getBinaryToASCIIConverter(float)`, `dtoa`, `developLongDigits`, `roundup`,
`getChars`), with Java's 32/64-bit wrap-around kept where its int and long paths have it;
tests/unit/test_java_float.py compares it with the JVM's own output.
"""

from __future__ import annotations

import math
import struct
from functools import lru_cache

_F32 = struct.Struct("<f")
_U32 = struct.Struct("<I")
_EXP_SHIFT = 52
_N_5_BITS = (0, 3, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28, 31, 33, 35, 38, 40, 42, 45, 47,
             49, 52, 54, 56, 59, 61)
_LONG_5_POW_LENGTH = 27
_INSIGNIFICANT_FOR_POW2 = (
    0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 8, 8, 8,
    9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15,
    15, 16, 16, 16, 17, 17, 17, 18, 18, 18, 19)


def _wrap(value: int, bits: int) -> int:
    """Java's int (32) or long (64) overflow."""
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def float_to_string(value: float) -> str:
    """`Float.toString((float) value)` as Java 17 writes it."""
    if value == 0:  # the cache below holds one entry for 0.0 and -0.0
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    return _float_text(value)


@lru_cache(maxsize=4096)
def _float_text(value: float) -> str:
    bits = _U32.unpack(_F32.pack(value))[0]
    negative = "-" if bits >> 31 else ""
    fract, bin_exp = bits & 0x7FFFFF, (bits >> 23) & 0xFF
    if bin_exp == 0xFF:
        return "NaN" if fract else negative + "Infinity"
    if bin_exp == 0:
        if not fract:
            return negative + "0.0"
        leading = 32 - fract.bit_length()
        shift = leading - 8
        fract <<= shift
        bin_exp = 1 - shift
        significant = 32 - leading
    else:
        fract |= 1 << 23
        significant = 24
    digits, exponent = _dtoa(bin_exp - 127, fract << 29, significant)
    return negative + _chars(digits, exponent)


def _long_digits(lvalue: int, insignificant: int) -> tuple[list[int], int]:
    """developLongDigits(0, lvalue, insignificant): digits, trailing zeros dropped."""
    exponent = 0
    if insignificant:
        pow10 = 10 ** insignificant
        lvalue, residue = divmod(lvalue, pow10)
        exponent += insignificant
        if residue >= pow10 >> 1:
            lvalue += 1
    text = str(lvalue)
    kept = text.rstrip("0")
    return [int(c) for c in kept], exponent + len(text)


def _estimate_dec_exp(fract_bits: int, bin_exp: int) -> int:
    d2 = struct.unpack("<d", struct.pack("<Q", (1023 << 52) | (fract_bits & ((1 << 52) - 1))))[0]
    d: float = (d2 - 1.5) * 0.289529654 + 0.176091259 + float(bin_exp) * 0.301029995663981
    return math.floor(d)


def _dtoa(bin_exp: int, fract_bits: int, significant: int) -> tuple[list[int], int]:
    """The digits and the decimal exponent (`decExponent`: value = 0.d1d2... * 10^it)."""
    tail_zeros = (fract_bits & -fract_bits).bit_length() - 1
    n_fract_bits = _EXP_SHIFT + 1 - tail_zeros
    n_tiny_bits = max(0, n_fract_bits - bin_exp - 1)
    if -21 <= bin_exp <= 62 and n_tiny_bits == 0 \
            and n_fract_bits + _N_5_BITS[n_tiny_bits] < 64:
        p2 = bin_exp - significant - 1
        insignificant = _INSIGNIFICANT_FOR_POW2[p2] if bin_exp > significant and \
            1 < p2 < len(_INSIGNIFICANT_FOR_POW2) else 0
        if bin_exp >= _EXP_SHIFT:
            fract_bits <<= bin_exp - _EXP_SHIFT
        else:
            fract_bits >>= _EXP_SHIFT - bin_exp
        return _long_digits(fract_bits, insignificant)
    dec_exp = _estimate_dec_exp(fract_bits, bin_exp)
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny_bits + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny_bits
    m5, m2 = b5, b2 - significant
    fract_bits >>= tail_zeros
    b2 -= n_fract_bits - 1
    common = min(b2, s2)
    b2, s2, m2 = b2 - common, s2 - common, m2 - common
    if n_fract_bits == 1:
        m2 -= 1
    if m2 < 0:
        b2, s2, m2 = b2 - m2, s2 - m2, 0
    b_bits = n_fract_bits + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    if b_bits < 64 and ten_s_bits < 64:
        width = 32 if b_bits < 32 and ten_s_bits < 32 else 64
        digits, dec_exp, high, low, low_difference = _machine_digits(
            width, fract_bits, b5, b2, s5, s2, m5, m2, dec_exp)
    else:
        digits, dec_exp, high, low, low_difference = _big_digits(
            fract_bits, b5, b2, s5, s2, m5, m2, dec_exp)
    exponent = dec_exp + 1
    if high and (not low or low_difference > 0 or (low_difference == 0 and digits[-1] & 1)):
        exponent = _roundup(digits, exponent)
    return digits, exponent


def _machine_digits(width: int, fract_bits: int, b5: int, b2: int, s5: int, s2: int, m5: int,
                    m2: int, dec_exp: int) -> tuple[list[int], int, bool, bool, int]:
    """dtoa's int (width 32) and long (64) paths, overflow included."""
    def w(x: int) -> int:
        return _wrap(x, width)
    b = w(w(fract_bits * 5 ** b5) << b2)
    s = w(5 ** s5 << s2)
    m = w(5 ** m5 << m2)
    tens = w(s * 10)
    q, b = b // s, w(10 * (b % s))
    m = w(m * 10)
    low, high = b < m, w(b + m) > tens
    digits: list[int] = []
    if q == 0 and not high:
        dec_exp -= 1
    else:
        digits.append(q)
    if dec_exp < -3 or dec_exp >= 8:
        high = low = False
    while not low and not high:
        q, b = b // s, w(10 * (b % s))
        m = w(m * 10)
        if m > 0:
            low, high = b < m, w(b + m) > tens
        else:
            low = high = True
        digits.append(q)
    return digits, dec_exp, high, low, w(w(b << 1) - tens)


def _big_digits(fract_bits: int, b5: int, b2: int, s5: int, s2: int, m5: int, m2: int,
                dec_exp: int) -> tuple[list[int], int, bool, bool, int]:
    """dtoa's FDBigInteger path (its normalising shift scales all alike: left out)."""
    big_b = fract_bits * 5 ** b5 << b2
    big_s = 5 ** s5 << s2
    big_m = 5 ** (m5 + 1) << (m2 + 1)
    ten_s = 5 ** (s5 + 1) << (s2 + 1)
    q, rest = divmod(big_b, big_s)
    big_b = rest * 10
    low, high = big_b < big_m, big_b + big_m >= ten_s
    digits: list[int] = []
    if q == 0 and not high:
        dec_exp -= 1
    else:
        digits.append(q)
    if dec_exp < -3 or dec_exp >= 8:
        high = low = False
    while not low and not high:
        q, rest = divmod(big_b, big_s)
        big_b = rest * 10
        big_m *= 10
        low, high = big_b < big_m, big_b + big_m >= ten_s
        digits.append(q)
    difference = (big_b << 1) - ten_s if high and low else 0
    return digits, dec_exp, high, low, difference


def _roundup(digits: list[int], exponent: int) -> int:
    i = len(digits) - 1
    q = digits[i]
    if q == 9:
        while q == 9 and i > 0:
            digits[i] = 0
            i -= 1
            q = digits[i]
        if q == 9:
            digits[0] = 1
            return exponent + 1
    digits[i] = q + 1
    return exponent


def _chars(digits: list[int], exponent: int) -> str:
    text = "".join(map(str, digits))
    n = len(text)
    if 0 < exponent < 8:
        shown = min(n, exponent)
        if shown < exponent:
            return text[:shown] + "0" * (exponent - shown) + ".0"
        return text[:shown] + "." + (text[shown:] if shown < n else "0")
    if -3 < exponent <= 0:
        return "0." + "0" * -exponent + text
    e = f"-{-exponent + 1}" if exponent <= 0 else str(exponent - 1)
    return text[0] + "." + (text[1:] if n > 1 else "0") + "E" + e
