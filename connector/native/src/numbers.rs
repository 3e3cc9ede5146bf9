//! The number texts of the conversions: Python's float repr, and a Decimal's digits scaled
//! and rounded as values.py's Decimal context does (half to even), written as Kafka
//! Connect's Decimal bytes or as fixed-point text.

/// Python's `repr(float)` as `json.dumps` writes it (NaN and infinities as JavaScript's).
pub fn write_float(buf: &mut Vec<u8>, x: f64) {
    if x.is_nan() {
        buf.extend_from_slice(b"NaN");
        return;
    }
    if x.is_infinite() {
        buf.extend_from_slice(if x > 0.0 { b"Infinity" } else { b"-Infinity" });
        return;
    }
    if x.is_sign_negative() {
        buf.push(b'-');
    }
    if x == 0.0 {
        buf.extend_from_slice(b"0.0");
        return;
    }
    // Rust's {:e} holds the shortest digits that read back as x (as Python's repr does)
    let text = format!("{:e}", x.abs());
    let (mantissa, exponent) = text.split_once('e').expect("{:e} has an exponent");
    let digits: Vec<u8> = mantissa.bytes().filter(|&b| b != b'.').collect();
    let exponent: i32 = exponent.parse().expect("{:e}'s exponent is a number");
    let n = digits.len() as i32;
    let point = exponent + 1; // x = 0.d1d2... * 10^point
    if -4 < point && point <= 16 {
        if point <= 0 {
            buf.extend_from_slice(b"0.");
            buf.extend(std::iter::repeat_n(b'0', (-point) as usize));
            buf.extend_from_slice(&digits);
        } else if point >= n {
            buf.extend_from_slice(&digits);
            buf.extend(std::iter::repeat_n(b'0', (point - n) as usize));
            buf.extend_from_slice(b".0");
        } else {
            buf.extend_from_slice(&digits[..point as usize]);
            buf.push(b'.');
            buf.extend_from_slice(&digits[point as usize..]);
        }
    } else {
        buf.push(digits[0]);
        if n > 1 {
            buf.push(b'.');
            buf.extend_from_slice(&digits[1..]);
        }
        buf.extend_from_slice(format!("e{}{:02}", if exponent < 0 { '-' } else { '+' },
                                      exponent.abs()).as_bytes());
    }
}

/// A finite Decimal's text: sign, coefficient digits, exponent (value = digits * 10^exp).
pub struct DecimalText {
    pub negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

/// `str(Decimal)`'s grammar for finite values ("-12.50", "1E+5", "0E-10"); None otherwise.
pub fn parse_decimal(text: &str) -> Option<DecimalText> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exp_text) = match rest.split_once(['E', 'e']) {
        Some((m, e)) => (m, Some(e)),
        None => (rest, None),
    };
    let mut exponent: i64 = match exp_text {
        Some(e) => {
            let body = e.strip_prefix('+').unwrap_or(e);
            let digits = body.strip_prefix('-').unwrap_or(body);
            if digits.is_empty() || digits.len() > 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            body.parse().ok()?
        }
        None => 0,
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let mut digits = Vec::with_capacity(whole.len() + fraction.len());
    for b in whole.bytes().chain(fraction.bytes()) {
        if !b.is_ascii_digit() {
            return None;
        }
        digits.push(b - b'0');
    }
    exponent -= fraction.len() as i64;
    Some(DecimalText { negative, digits, exponent })
}

/// Digits a value may have here; a longer one (no column has it) goes to Python.
const MAX_DIGITS: i64 = 120;

impl DecimalText {
    /// |value| * 10^scale rounded half to even (the context's rounding in values.py), as
    /// decimal digits without leading zeros (empty for zero); None when too long.
    pub fn unscaled(&self, scale: i64) -> Option<Vec<u8>> {
        let shift = self.exponent + scale;
        let first = self.digits.iter().position(|&d| d != 0).unwrap_or(self.digits.len());
        let significant = &self.digits[first..];
        if shift >= 0 {
            if significant.is_empty() {
                return Some(vec![]);
            }
            if significant.len() as i64 + shift > MAX_DIGITS {
                return None;
            }
            let mut out = significant.to_vec();
            out.extend(std::iter::repeat_n(0, shift as usize));
            return Some(out);
        }
        let dropped = (-shift) as usize;
        let n = self.digits.len();
        if dropped > n {
            return Some(vec![]); // below half a unit: rounds to zero
        }
        if n as i64 > MAX_DIGITS + dropped as i64 {
            return None;
        }
        let (kept, rest) = self.digits.split_at(n - dropped);
        let mut out: Vec<u8> = kept.to_vec();
        let first_dropped = rest[0];
        let tail_nonzero = rest[1..].iter().any(|&d| d != 0);
        let last_odd = out.last().is_some_and(|&d| d % 2 == 1);
        if first_dropped > 5 || (first_dropped == 5 && (tail_nonzero || last_odd)) {
            let mut i = out.len();
            loop {
                if i == 0 {
                    out.insert(0, 1);
                    break;
                }
                i -= 1;
                if out[i] == 9 {
                    out[i] = 0;
                } else {
                    out[i] += 1;
                    break;
                }
            }
        }
        let lead = out.iter().position(|&d| d != 0).unwrap_or(out.len());
        out.drain(..lead);
        Some(out)
    }
}

/// `format(quantized, "f")`: the sign kept (also of a zero), `scale` fraction digits.
pub fn fixed_text(negative: bool, unscaled: &[u8], scale: usize) -> String {
    let mut text = String::with_capacity(unscaled.len() + 3);
    if negative {
        text.push('-');
    }
    let width = unscaled.len().max(scale + 1);
    let padded = std::iter::repeat_n(0u8, width - unscaled.len()).chain(unscaled.iter().copied());
    for (i, d) in padded.enumerate() {
        if i == width - scale {
            text.push('.');
        }
        text.push((b'0' + d) as char);
    }
    text
}

/// Java's BigInteger.toByteArray() of the signed value: minimal big-endian two's complement.
pub fn twos_complement(negative: bool, unscaled: &[u8]) -> Vec<u8> {
    let mut magnitude = to_binary(unscaled);
    let negative = negative && !magnitude.is_empty();
    if negative {
        // -m is ~(m - 1): the bytes of m - 1, inverted
        for byte in magnitude.iter_mut().rev() {
            let borrow = *byte == 0;
            *byte = byte.wrapping_sub(1);
            if !borrow {
                break;
            }
        }
        let lead = magnitude.iter().position(|&b| b != 0).unwrap_or(magnitude.len());
        magnitude.drain(..lead);
    }
    if magnitude.first().is_none_or(|&b| b >= 0x80) {
        magnitude.insert(0, 0);
    }
    if negative {
        for byte in magnitude.iter_mut() {
            *byte = !*byte;
        }
    }
    magnitude
}

/// Decimal digits to big-endian bytes without leading zeros (empty for zero).
fn to_binary(digits: &[u8]) -> Vec<u8> {
    if digits.len() <= 38 {
        let n = digits.iter().fold(0u128, |n, &d| n * 10 + d as u128);
        let bytes = n.to_be_bytes();
        let lead = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
        return bytes[lead..].to_vec();
    }
    let mut limbs: Vec<u32> = vec![]; // little-endian base 2^32
    for &d in digits {
        let mut carry = d as u64;
        for limb in limbs.iter_mut() {
            let x = *limb as u64 * 10 + carry;
            *limb = x as u32;
            carry = x >> 32;
        }
        if carry > 0 {
            limbs.push(carry as u32);
        }
    }
    let mut out: Vec<u8> = limbs.iter().rev().flat_map(|l| l.to_be_bytes()).collect();
    let lead = out.iter().position(|&b| b != 0).unwrap_or(out.len());
    out.drain(..lead);
    out
}
