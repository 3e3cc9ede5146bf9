//! Java 17's `Float.toString`, digit for digit: connector/events/java_float.py ported (its
//! docstring says why Debezium's FLOAT text needs it), step for step with the same wrap-around
//! of Java's int and long paths; Python's floor division where that port divides.
//! None where the port would do something it has no case for (a zero divisor, a "digit"
//! outside 0-9): the Python converter then runs and says what it says.

use std::cmp::Ordering;

const EXP_SHIFT: i64 = 52;
const N_5_BITS: [i64; 27] = [0, 3, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28, 31, 33, 35, 38, 40,
                             42, 45, 47, 49, 52, 54, 56, 59, 61];
const INSIGNIFICANT_FOR_POW2: [i64; 64] = [
    0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 8, 8, 8,
    9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15,
    15, 16, 16, 16, 17, 17, 17, 18, 18, 18, 19];

/// `Float.toString((float) value)`; None when the value has no float (too large: Python's
/// struct.pack fails) or the port has no case for it.
pub fn float_to_string(value: f64) -> Option<String> {
    let single = value as f32;
    if single.is_infinite() && !value.is_infinite() {
        return None;
    }
    let bits = single.to_bits();
    let negative = if bits >> 31 == 1 { "-" } else { "" };
    let mut fract = (bits & 0x7F_FFFF) as u64;
    let mut bin_exp = ((bits >> 23) & 0xFF) as i64;
    if bin_exp == 0xFF {
        return Some(if fract != 0 { "NaN".into() } else { format!("{negative}Infinity") });
    }
    let significant;
    if bin_exp == 0 {
        if fract == 0 {
            return Some(format!("{negative}0.0"));
        }
        let leading = 32 - (64 - fract.leading_zeros() as i64);
        let shift = leading - 8;
        fract <<= shift;
        bin_exp = 1 - shift;
        significant = 32 - leading;
    } else {
        fract |= 1 << 23;
        significant = 24;
    }
    let (digits, exponent) = dtoa(bin_exp - 127, fract << 29, significant)?;
    Some(format!("{negative}{}", chars(&digits, exponent)))
}

/// Java's int (32) or long (64) overflow.
fn wrap(x: i128, width: u32) -> i128 {
    if width == 32 { x as i32 as i128 } else { x as i64 as i128 }
}

/// Python's `//` and `%`: the quotient floored, the remainder of the divisor's sign.
fn floor_divmod(a: i128, b: i128) -> Option<(i128, i128)> {
    if b == 0 {
        return None;
    }
    let (q, r) = (a / b, a % b);
    Some(if r != 0 && ((r < 0) != (b < 0)) { (q - 1, r + b) } else { (q, r) })
}

/// developLongDigits(0, lvalue, insignificant): digits, trailing zeros dropped.
fn long_digits(mut lvalue: u128, insignificant: i64) -> (Vec<u8>, i64) {
    let mut exponent = 0;
    if insignificant > 0 {
        let pow10 = 10u128.pow(insignificant as u32);
        let residue = lvalue % pow10;
        lvalue /= pow10;
        exponent += insignificant;
        if residue >= pow10 >> 1 {
            lvalue += 1;
        }
    }
    let text = lvalue.to_string();
    let kept = text.trim_end_matches('0');
    (kept.bytes().map(|b| b - b'0').collect(), exponent + text.len() as i64)
}

#[allow(clippy::approx_constant)] // Java's own constant, not LOG10_2's value
fn estimate_dec_exp(fract_bits: u64, bin_exp: i64) -> i64 {
    let d2 = f64::from_bits((1023u64 << 52) | (fract_bits & ((1u64 << 52) - 1)));
    let d = (d2 - 1.5) * 0.289529654 + 0.176091259 + bin_exp as f64 * 0.301029995663981;
    d.floor() as i64
}

fn n5_bits(n: i64) -> i64 {
    if (n as usize) < N_5_BITS.len() { N_5_BITS[n as usize] } else { n * 3 }
}

/// The digits and the decimal exponent (value = 0.d1d2... * 10^exponent).
fn dtoa(bin_exp: i64, mut fract_bits: u64, significant: i64) -> Option<(Vec<u8>, i64)> {
    let tail_zeros = fract_bits.trailing_zeros() as i64;
    let n_fract_bits = EXP_SHIFT + 1 - tail_zeros;
    let n_tiny_bits = (n_fract_bits - bin_exp - 1).max(0);
    if (-21..=62).contains(&bin_exp) && n_tiny_bits == 0
        && n_fract_bits + N_5_BITS[n_tiny_bits as usize] < 64 {
        let p2 = bin_exp - significant - 1;
        let insignificant = if bin_exp > significant && 1 < p2
            && p2 < INSIGNIFICANT_FOR_POW2.len() as i64 {
            INSIGNIFICANT_FOR_POW2[p2 as usize]
        } else {
            0
        };
        let long = if bin_exp >= EXP_SHIFT {
            (fract_bits as u128) << (bin_exp - EXP_SHIFT)
        } else {
            (fract_bits >> (EXP_SHIFT - bin_exp)) as u128
        };
        return Some(long_digits(long, insignificant));
    }
    let dec_exp = estimate_dec_exp(fract_bits, bin_exp);
    let b5 = (-dec_exp).max(0);
    let mut b2 = b5 + n_tiny_bits + bin_exp;
    let s5 = dec_exp.max(0);
    let mut s2 = s5 + n_tiny_bits;
    let (m5, mut m2) = (b5, b2 - significant);
    fract_bits >>= tail_zeros;
    b2 -= n_fract_bits - 1;
    let common = b2.min(s2);
    b2 -= common;
    s2 -= common;
    m2 -= common;
    if n_fract_bits == 1 {
        m2 -= 1;
    }
    if m2 < 0 {
        b2 -= m2;
        s2 -= m2;
        m2 = 0;
    }
    let b_bits = n_fract_bits + b2 + n5_bits(b5);
    let ten_s_bits = s2 + 1 + n5_bits(s5 + 1);
    let shape = Shape { fract_bits, b5, b2, s5, s2, m5, m2, dec_exp };
    let (mut digits, dec_exp, high, low, difference) = if b_bits < 64 && ten_s_bits < 64 {
        machine_digits(if b_bits < 32 && ten_s_bits < 32 { 32 } else { 64 }, &shape)?
    } else {
        big_digits(&shape)?
    };
    let mut exponent = dec_exp + 1;
    if high && (!low || difference == Ordering::Greater
                || (difference == Ordering::Equal && digits.last().is_some_and(|d| d & 1 == 1))) {
        exponent = roundup(&mut digits, exponent);
    }
    Some((digits, exponent))
}

struct Shape {
    fract_bits: u64,
    b5: i64,
    b2: i64,
    s5: i64,
    s2: i64,
    m5: i64,
    m2: i64,
    dec_exp: i64,
}

type Developed = (Vec<u8>, i64, bool, bool, Ordering);

fn digit(q: i128) -> Option<u8> {
    u8::try_from(q).ok().filter(|d| *d <= 9)
}

/// dtoa's int (width 32) and long (64) paths, overflow included.
fn machine_digits(width: u32, s: &Shape) -> Option<Developed> {
    let w = |x: i128| wrap(x, width);
    let pow5 = |n: i64| 5i128.checked_pow(n as u32);
    let shl = |x: i128, n: i64| -> Option<i128> {
        if !(0..64).contains(&n) { None } else { Some(x << n) }
    };
    let mut b = w(shl(w((s.fract_bits as i128).checked_mul(pow5(s.b5)?)?), s.b2)?);
    let sv = w(shl(pow5(s.s5)?, s.s2)?);
    let mut m = w(shl(pow5(s.m5)?, s.m2)?);
    let tens = w(sv * 10);
    let (q, rest) = floor_divmod(b, sv)?;
    b = w(10 * rest);
    m = w(m * 10);
    let (mut low, mut high) = (b < m, w(b + m) > tens);
    let mut digits = vec![];
    let mut dec_exp = s.dec_exp;
    if q == 0 && !high {
        dec_exp -= 1;
    } else {
        digits.push(digit(q)?);
    }
    if !(-3..8).contains(&dec_exp) {
        high = false;
        low = false;
    }
    while !low && !high {
        let (q, rest) = floor_divmod(b, sv)?;
        b = w(10 * rest);
        m = w(m * 10);
        if m > 0 {
            (low, high) = (b < m, w(b + m) > tens);
        } else {
            (low, high) = (true, true);
        }
        digits.push(digit(q)?);
    }
    Some((digits, dec_exp, high, low, w(w(b << 1) - tens).cmp(&0)))
}

/// dtoa's FDBigInteger path (its normalising shift scales all alike: left out).
fn big_digits(s: &Shape) -> Option<Developed> {
    if s.b2 < 0 || s.s2 < 0 || s.m2 < -1 {
        return None; // Python's shift would fail
    }
    let mut big_b = Big::pow5(s.b5).mul_small(s.fract_bits).shl(s.b2);
    let big_s = Big::pow5(s.s5).shl(s.s2);
    let mut big_m = Big::pow5(s.m5 + 1).shl(s.m2 + 1);
    let ten_s = Big::pow5(s.s5 + 1).shl(s.s2 + 1);
    let (q, rest) = big_b.divmod_small(&big_s)?;
    big_b = rest.mul_small(10);
    let (mut low, mut high) = (big_b.cmp(&big_m).is_lt(), big_b.add(&big_m).cmp(&ten_s).is_ge());
    let mut digits = vec![];
    let mut dec_exp = s.dec_exp;
    if q == 0 && !high {
        dec_exp -= 1;
    } else {
        digits.push(digit(q as i128)?);
    }
    if !(-3..8).contains(&dec_exp) {
        high = false;
        low = false;
    }
    while !low && !high {
        let (q, rest) = big_b.divmod_small(&big_s)?;
        big_b = rest.mul_small(10);
        big_m = big_m.mul_small(10);
        (low, high) = (big_b.cmp(&big_m).is_lt(), big_b.add(&big_m).cmp(&ten_s).is_ge());
        digits.push(digit(q as i128)?);
    }
    let difference = if high && low { big_b.shl(1).cmp(&ten_s) } else { Ordering::Equal };
    Some((digits, dec_exp, high, low, difference))
}

fn roundup(digits: &mut [u8], exponent: i64) -> i64 {
    let mut i = digits.len() - 1;
    let mut q = digits[i];
    if q == 9 {
        while q == 9 && i > 0 {
            digits[i] = 0;
            i -= 1;
            q = digits[i];
        }
        if q == 9 {
            digits[0] = 1;
            return exponent + 1;
        }
    }
    digits[i] = q + 1;
    exponent
}

fn chars(digits: &[u8], exponent: i64) -> String {
    let text: String = digits.iter().map(|d| (b'0' + d) as char).collect();
    let n = text.len() as i64;
    if 0 < exponent && exponent < 8 {
        let shown = n.min(exponent) as usize;
        if (shown as i64) < exponent {
            return format!("{}{}.0", &text[..shown], "0".repeat(exponent as usize - shown));
        }
        return format!("{}.{}", &text[..shown],
                       if (shown as i64) < n { &text[shown..] } else { "0" });
    }
    if -3 < exponent && exponent <= 0 {
        return format!("0.{}{}", "0".repeat((-exponent) as usize), text);
    }
    let e = if exponent <= 0 { format!("-{}", -exponent + 1) } else { (exponent - 1).to_string() };
    format!("{}.{}E{}", &text[..1], if n > 1 { &text[1..] } else { "0" }, e)
}

/// A non-negative integer of 32-bit limbs, least significant first: all dtoa's big path needs.
#[derive(Clone)]
struct Big(Vec<u64>);

impl Big {
    fn trimmed(mut limbs: Vec<u64>) -> Big {
        while limbs.last() == Some(&0) {
            limbs.pop();
        }
        Big(limbs)
    }

    fn pow5(n: i64) -> Big {
        let mut out = Big(vec![1]);
        for _ in 0..n {
            out = out.mul_small(5);
        }
        out
    }

    fn mul_small(&self, k: u64) -> Big {
        let mut out = Vec::with_capacity(self.0.len() + 2);
        let mut carry: u128 = 0;
        for &limb in &self.0 {
            let x = limb as u128 * k as u128 + carry;
            out.push((x & 0xFFFF_FFFF) as u64);
            carry = x >> 32;
        }
        while carry > 0 {
            out.push((carry & 0xFFFF_FFFF) as u64);
            carry >>= 32;
        }
        Big::trimmed(out)
    }

    fn shl(&self, n: i64) -> Big {
        let (words, bits) = ((n / 32) as usize, (n % 32) as u32);
        let mut out = vec![0u64; words];
        let mut carry = 0u64;
        for &limb in &self.0 {
            let x = (limb << bits) | carry;
            out.push(x & 0xFFFF_FFFF);
            carry = x >> 32;
        }
        out.push(carry);
        Big::trimmed(out)
    }

    fn add(&self, other: &Big) -> Big {
        let mut out = Vec::with_capacity(self.0.len().max(other.0.len()) + 1);
        let mut carry = 0u64;
        for i in 0..self.0.len().max(other.0.len()) {
            let x = self.0.get(i).unwrap_or(&0) + other.0.get(i).unwrap_or(&0) + carry;
            out.push(x & 0xFFFF_FFFF);
            carry = x >> 32;
        }
        out.push(carry);
        Big::trimmed(out)
    }

    /// self - other, for self >= other.
    fn sub(&self, other: &Big) -> Big {
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let mut x = self.0[i] as i64 - *other.0.get(i).unwrap_or(&0) as i64 - borrow;
            borrow = 0;
            if x < 0 {
                x += 1 << 32;
                borrow = 1;
            }
            out.push(x as u64);
        }
        Big::trimmed(out)
    }

    fn cmp(&self, other: &Big) -> Ordering {
        self.0.len().cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }

    /// (self // d, self % d) for a small quotient (a decimal digit, at most a few more).
    fn divmod_small(&self, d: &Big) -> Option<(u64, Big)> {
        if d.0.is_empty() {
            return None;
        }
        let mut rest = self.clone();
        let mut q = 0;
        while rest.cmp(d).is_ge() {
            rest = rest.sub(d);
            q += 1;
            if q > 99 {
                return None;
            }
        }
        Some((q, rest))
    }
}

