//! The byte-level reads of binlog row images, as the Python reference makes them: Python's
//! slices and int.from_bytes, MySQL's packed dates and times, NEWDECIMAL's digit groups.

const COMPRESSED_BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];
pub const FSP_BYTES: [usize; 7] = [0, 1, 1, 2, 2, 3, 3];

/// data[a:b] as Python slices it (never out of range: short or empty past the end).
pub fn sl(data: &[u8], a: usize, b: usize) -> &[u8] {
    let n = data.len();
    let a = a.min(n);
    &data[a..b.min(n).max(a)]
}

/// int.from_bytes(s, 'little'), s at most 8 bytes.
pub fn le_uint(s: &[u8]) -> u64 {
    s.iter().rev().fold(0, |n, &b| n << 8 | b as u64)
}

/// int.from_bytes(s, 'big'), s at most 8 bytes.
pub fn be_uint(s: &[u8]) -> u64 {
    s.iter().fold(0, |n, &b| n << 8 | b as u64)
}

/// A two's complement of len(s) bytes (signed=True); 0 for no bytes.
pub fn signed(n: u64, len: usize) -> i64 {
    if len == 0 || len >= 8 {
        return n as i64;
    }
    let shift = 64 - 8 * len as u32;
    ((n << shift) as i64) >> shift
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The proleptic Gregorian date of a day count from 1970-01-01 (H. Hinnant's algorithm).
pub fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + (m <= 2) as i64, m, d)
}

/// The microseconds the reference sets: `int(f / 10)` for an odd fsp, times 10**(6 - fsp).
pub fn micros(f: i64, fsp: u32) -> i64 {
    let scaled = if fsp % 2 == 1 { f / 10 } else { f };
    scaled * 10i64.pow(6 - fsp)
}

/// What datetime.date accepts.
pub fn valid_date(y: i64, m: i64, d: i64) -> bool {
    (1..=9999).contains(&y) && (1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m)
}

/// A datetime's pickle state: year (2 bytes), month, day, hour, minute, second, microsecond
/// (3 bytes), big-endian.
pub fn datetime_state(y: i64, m: i64, d: i64, h: i64, mi: i64, s: i64, us: i64) -> [u8; 10] {
    [(y >> 8) as u8, y as u8, m as u8, d as u8, h as u8, mi as u8, s as u8, (us >> 16) as u8,
     (us >> 8) as u8, us as u8]
}

/// A NEWDECIMAL's bytes (`raw`: Python's slice of them, short at the buffer's end) as the
/// text of the reference's Decimal, written into `text`, its length returned: the groups'
/// sum in decimal digits (a group above its digits, never written by MySQL, carries into
/// the next as the reference's integer arithmetic does), `scale` of them after the point.
pub fn decimal_text(raw: &[u8], size: usize, scale: u32, groups: &[(usize, u32)],
                    text: &mut [u8; 96]) -> usize {
    let mut buf = [0u8; 32];  // the bytes (65 digits take 30), a short slice right-aligned
    let bytes = &mut buf[..size];
    bytes[size - raw.len()..].copy_from_slice(raw);
    let negative = bytes[0] & 0x80 == 0;
    bytes[0] ^= 0x80;
    if negative {
        bytes.iter_mut().for_each(|b| *b ^= 0xFF);
    }
    let mut digits = [0u8; 80];  // least significant first; 65 and a carried group's
    let (mut at, mut end) = (0usize, size);
    for &(width, count) in groups.iter().rev() {
        let mut g = be_uint(&bytes[end - width..end]);
        end -= width;
        let mut i = at;
        let mut carry = 0u64;
        while g > 0 || carry > 0 {
            let s = digits[i] as u64 + g % 10 + carry;
            digits[i] = (s % 10) as u8;
            carry = s / 10;
            g /= 10;
            i += 1;
        }
        at += count as usize;
    }
    let top = digits.iter().rposition(|&d| d != 0).unwrap_or(0);
    let mut n = 0;
    if negative {
        text[0] = b'-';
        n = 1;
    }
    for &d in digits[..=top].iter().rev() {
        text[n] = b'0' + d;
        n += 1;
    }
    if scale > 0 {
        text[n..n + 2].copy_from_slice(b"E-");
        n += 2;
        for d in scale.to_string().bytes() {
            text[n] = d;
            n += 1;
        }
    }
    n
}

/// NEWDECIMAL(precision, scale)'s groups, most significant first: (bytes, digits).
pub fn decimal_groups(precision: u32, scale: u32) -> Vec<(usize, u32)> {
    let (int, frac) = (precision - scale, scale);
    let head = COMPRESSED_BYTES[(int % 9) as usize];
    let tail = COMPRESSED_BYTES[(frac % 9) as usize];
    let mut groups = vec![];
    if head > 0 {
        groups.push((head, int % 9));
    }
    groups.extend(std::iter::repeat_n((4, 9), (int / 9 + frac / 9) as usize));
    if tail > 0 {
        groups.push((tail, frac % 9));
    }
    groups
}
