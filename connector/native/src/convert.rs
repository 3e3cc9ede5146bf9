//! Debezium's value conversions for the common column types, compiled: a decoded value
//! (the binlog's or a SELECT's) to the value its Python converter (connector/events/values.py)
//! gives, as a Rust value; the JSON writer writes it as `json.dumps` would (here), the Avro
//! writer as fastavro would (avro_value.rs), byte for byte.
//!
//! Each conversion handles the exact Python types it knows (int, str, bytes, Decimal, date,
//! datetime, timedelta, set); any other value answers `Outcome::Python` and the column's
//! Python converter runs instead, so an unexpected value is converted (or fails) as there.

use std::borrow::Cow;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyFloat, PyFrozenSet, PyInt, PySet, PyString, PyType};

use crate::dates::{days_from_civil, delta_micros, ymd, DateTime};
use crate::java_float::float_to_string;
use crate::json::{write_base64, write_int, write_str};
use crate::numbers::{fixed_text, parse_decimal, twos_complement, write_float};

/// One column's conversion, chosen once from the Python side's description.
pub enum Conversion {
    BigintUnsigned,
    Bool,
    BitBool,
    Bits(usize),
    Year,
    DecimalPrecise(i64),
    DecimalString(i64),
    DecimalDouble,
    Double,
    Float32,
    Float32Widened,
    DateDays,
    TimeMicros,
    TimeMillis,
    EpochMicros,
    EpochMillis,
    Zoned(usize),
    Str,
    Binary(Option<usize>),
    EnumSet(Vec<(Py<PyString>, String)>),
}

/// A converted value: the Python converter's result as the writers need it (`Float` is the
/// Python float it gives), none (the column's fallback is written), or `Python`: the value is
/// not one this conversion takes, its Python converter is to run.
pub enum Converted<'a> {
    Null,
    Python,
    Int(i128),
    Float(f64),
    Bool(bool),
    Text(Cow<'a, str>),
    Bytes(Cow<'a, [u8]>),
}

/// What the JSON writing did: wrote the value, found none (the column's fallback is
/// written), or left it to the Python converter (nothing written).
pub enum Outcome {
    Written,
    Null,
    Python,
}

impl Conversion {
    /// `(kind, number, members)` as connector/events/types.py describes it.
    pub fn new(kind: &str, number: i64, members: Vec<Bound<'_, PyString>>) -> PyResult<Self> {
        Ok(match kind {
            "bigint_unsigned" => Self::BigintUnsigned,
            "bool" => Self::Bool,
            "bit_bool" => Self::BitBool,
            "bits" => Self::Bits(usize::try_from(number).unwrap_or(0)),
            "year" => Self::Year,
            "decimal_precise" => Self::DecimalPrecise(number),
            "decimal_string" => Self::DecimalString(number),
            "decimal_double" => Self::DecimalDouble,
            "double" => Self::Double,
            "float32" => Self::Float32,
            "float32_widened" => Self::Float32Widened,
            "date_days" => Self::DateDays,
            "time_micros" => Self::TimeMicros,
            "time_millis" => Self::TimeMillis,
            "epoch_micros" => Self::EpochMicros,
            "epoch_millis" => Self::EpochMillis,
            "zoned" => Self::Zoned(number.clamp(0, 6) as usize),
            "string" => Self::Str,
            "binary" => Self::Binary(usize::try_from(number).ok()),
            "enum_set" => Self::EnumSet(members.into_iter()
                .map(|m| Ok((m.clone().unbind(), m.to_str()?.to_owned())))
                .collect::<PyResult<_>>()?),
            _ => return Err(PyValueError::new_err(format!("no compiled conversion {kind:?}"))),
        })
    }
}

/// The Python types the conversions recognise (exact types: a subclass goes to Python).
pub struct Types {
    decimal: Py<PyType>,
    date: Py<PyType>,
    datetime: Py<PyType>,
    timedelta: Py<PyType>,
}

impl Types {
    pub fn new(py: Python<'_>) -> PyResult<Self> {
        let datetime = py.import("datetime")?;
        let get = |m: &Bound<'_, PyModule>, name: &str| -> PyResult<Py<PyType>> {
            Ok(m.getattr(name)?.downcast_into::<PyType>()?.unbind())
        };
        Ok(Types {
            decimal: get(&py.import("decimal")?, "Decimal")?,
            date: get(&datetime, "date")?,
            datetime: get(&datetime, "datetime")?,
            timedelta: get(&datetime, "timedelta")?,
        })
    }
}

fn is(v: &Bound<'_, PyAny>, t: &Py<PyType>) -> bool {
    v.get_type().is(t.bind(v.py()))
}

/// `v` converted by `conv`: the value its Python converter would give, as a Rust value.
pub fn convert<'a>(conv: &Conversion, v: &'a Bound<'_, PyAny>,
                   types: &Types) -> PyResult<Converted<'a>> {
    use Converted::*;
    Ok(match conv {
        Conversion::BigintUnsigned => {
            if !v.is_exact_instance_of::<PyInt>() {
                return Ok(Python);
            }
            if let Ok(n) = v.extract::<i64>() {
                Int(n as i128)
            } else if let Ok(n) = v.extract::<u64>() {
                Int(n as i64 as i128) // Java's long cast: n - 2^64
            } else {
                Python
            }
        }
        Conversion::Bool => {
            if !v.is_exact_instance_of::<PyInt>() {
                return Ok(Python);
            }
            Bool(v.is_truthy()?)
        }
        Conversion::BitBool => {
            if let Ok(s) = v.downcast_exact::<PyString>() {
                let s = s.to_str()?;
                if !s.bytes().all(|b| b == b'0' || b == b'1') {
                    return Ok(Python); // int(s, 2) takes more forms: let it say what they are
                }
                Bool(s.contains('1'))
            } else if let Ok(b) = v.downcast_exact::<PyBytes>() {
                Bool(b.as_bytes().iter().any(|&x| x != 0))
            } else if v.is_exact_instance_of::<PyInt>() {
                Bool(v.is_truthy()?)
            } else {
                Python
            }
        }
        Conversion::Bits(size) => {
            let big_endian: Vec<u8> = if let Ok(s) = v.downcast_exact::<PyString>() {
                let s = s.to_str()?;
                if !s.bytes().all(|b| b == b'0' || b == b'1') {
                    return Ok(Python);
                }
                let mut out = vec![0u8; s.len().div_ceil(8)];
                for (i, b) in s.bytes().rev().enumerate() {
                    let n = out.len();
                    out[n - 1 - i / 8] |= (b - b'0') << (i % 8);
                }
                out
            } else if let Ok(b) = v.downcast_exact::<PyBytes>() {
                b.as_bytes().to_vec()
            } else if v.is_exact_instance_of::<PyInt>() {
                let Ok(n) = v.extract::<u64>() else { return Ok(Python) };
                n.to_be_bytes().to_vec()
            } else {
                return Ok(Python);
            };
            let lead = big_endian.iter().position(|&b| b != 0).unwrap_or(big_endian.len());
            let mut little: Vec<u8> = big_endian[lead..].iter().rev().copied().collect();
            if little.len() > *size {
                return Ok(Python); // to_bytes' OverflowError is Python's
            }
            little.resize(*size, 0);
            Bytes(Cow::Owned(little))
        }
        Conversion::Year => {
            if !v.is_exact_instance_of::<PyInt>() {
                return Ok(Python);
            }
            let Ok(n) = v.extract::<i64>() else { return Ok(Python) };
            Int(if n == 1900 { 0 } else { n as i128 }) // the library's YEAR 0000
        }
        Conversion::DecimalPrecise(scale) | Conversion::DecimalString(scale) => {
            if !is(v, &types.decimal) {
                return Ok(Python);
            }
            let text = v.str()?;
            let Some(d) = parse_decimal(text.to_str()?) else { return Ok(Python) };
            let Some(unscaled) = d.unscaled(*scale) else { return Ok(Python) };
            if matches!(conv, Conversion::DecimalPrecise(_)) {
                Bytes(Cow::Owned(twos_complement(d.negative, &unscaled)))
            } else {
                Text(Cow::Owned(fixed_text(d.negative, &unscaled, *scale as usize)))
            }
        }
        Conversion::DecimalDouble => {
            if !is(v, &types.decimal) {
                return Ok(Python);
            }
            let text = v.str()?;
            let text = text.to_str()?;
            if parse_decimal(text).is_none() {
                return Ok(Python);
            }
            let Ok(x) = text.parse::<f64>() else { return Ok(Python) };
            Float(x)
        }
        Conversion::Double => {
            let Ok(f) = v.downcast_exact::<PyFloat>() else { return Ok(Python) };
            Float(f.value())
        }
        Conversion::Float32 => {
            let Ok(f) = v.downcast_exact::<PyFloat>() else { return Ok(Python) };
            let Some(text) = float_to_string(f.value()) else { return Ok(Python) };
            let Ok(x) = text.parse::<f64>() else { return Ok(Python) };
            Float(x) // the double of Java's text, as float(text) reads it
        }
        Conversion::Float32Widened => {
            let Ok(f) = v.downcast_exact::<PyFloat>() else { return Ok(Python) };
            let single = f.value() as f32;
            if single.is_infinite() && !f.value().is_infinite() {
                return Ok(Python); // no float holds it: struct.pack's error is Python's
            }
            Float(single as f64)
        }
        Conversion::DateDays => {
            if is(v, &types.date) || is(v, &types.datetime) {
                let (y, m, d) = ymd(v)?;
                Int(days_from_civil(y, m, d) as i128)
            } else {
                text_is_null(v)
            }
        }
        Conversion::TimeMicros | Conversion::TimeMillis => {
            if !is(v, &types.timedelta) {
                return Ok(text_is_null(v));
            }
            let total = delta_micros(v)?;
            Int(if matches!(conv, Conversion::TimeMillis) { total.div_euclid(1000) }
                else { total })
        }
        Conversion::EpochMicros | Conversion::EpochMillis => {
            if !is(v, &types.datetime) {
                return Ok(text_is_null(v));
            }
            let t = DateTime::read(v)?;
            let secs = days_from_civil(t.year, t.month, t.day) as i128 * 86_400
                + (t.hour * 3600 + t.minute * 60 + t.second) as i128;
            let total = secs * 1_000_000 + t.micro as i128;
            Int(if matches!(conv, Conversion::EpochMillis) { total.div_euclid(1000) }
                else { total })
        }
        Conversion::Zoned(fsp) => {
            if !is(v, &types.datetime) {
                return Ok(text_is_null(v));
            }
            let t = DateTime::read(v)?;
            if t.aware {
                return Ok(Python); // astimezone's arithmetic stays there
            }
            if (t.year, t.month, t.day, t.hour, t.minute, t.second, t.micro)
                == (1970, 1, 1, 0, 0, 0, 0) {
                return Ok(Null); // zero TIMESTAMP (the binlog's epoch 0)
            }
            if !(0..=9999).contains(&t.year) {
                return Ok(Python);
            }
            let mut text = format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", t.year, t.month,
                                   t.day, t.hour, t.minute, t.second);
            if *fsp > 0 {
                text.push_str(&format!(".{:06}", t.micro)[..1 + fsp]);
            }
            text.push('Z');
            Text(Cow::Owned(text))
        }
        Conversion::Str => {
            if let Ok(s) = v.downcast_exact::<PyString>() {
                Text(Cow::Borrowed(s.to_str()?))
            } else if let Ok(b) = v.downcast_exact::<PyBytes>() {
                // decode("utf-8", "replace") of invalid text is Python's to do
                let Ok(s) = std::str::from_utf8(b.as_bytes()) else { return Ok(Python) };
                Text(Cow::Borrowed(s))
            } else {
                Python
            }
        }
        Conversion::Binary(length) => {
            let mut raw: Cow<'a, [u8]> = if let Ok(b) = v.downcast_exact::<PyBytes>() {
                Cow::Borrowed(b.as_bytes())
            } else if let Ok(s) = v.downcast_exact::<PyString>() {
                let mut latin1 = Vec::new();
                for c in s.to_str()?.chars() {
                    let Ok(b) = u8::try_from(c as u32) else { return Ok(Python) };
                    latin1.push(b);
                }
                Cow::Owned(latin1)
            } else {
                return Ok(Python);
            };
            if let Some(n) = length {
                if raw.len() < *n {
                    raw.to_mut().resize(*n, 0); // the binlog strips BINARY(n)'s zero padding
                }
            }
            Bytes(raw)
        }
        Conversion::EnumSet(members) => {
            if let Ok(s) = v.downcast_exact::<PyString>() {
                return Ok(Text(Cow::Borrowed(s.to_str()?)));
            }
            let set = v.downcast_exact::<PySet>().ok();
            let frozen = v.downcast_exact::<PyFrozenSet>().ok();
            if set.is_none() && frozen.is_none() {
                return Ok(Python);
            }
            let contains = |m: &Py<PyString>| -> PyResult<bool> {
                match (&set, &frozen) {
                    (Some(s), _) => s.contains(m),
                    (_, Some(f)) => f.contains(m),
                    _ => Ok(false),
                }
            };
            let mut text = String::new();
            for (member, name) in members {
                if contains(member)? {
                    if !text.is_empty() {
                        text.push(',');
                    }
                    text.push_str(name);
                }
            }
            Text(Cow::Owned(text))
        }
    })
}

/// Write `v` converted by `conv` as JSON text into `buf`; on `Null` or `Python` nothing is
/// written.
pub fn write_json(conv: &Conversion, v: &Bound<'_, PyAny>, types: &Types,
                  buf: &mut Vec<u8>) -> PyResult<Outcome> {
    match convert(conv, v, types)? {
        Converted::Null => return Ok(Outcome::Null),
        Converted::Python => return Ok(Outcome::Python),
        Converted::Int(n) => write_int(buf, n),
        Converted::Float(x) => write_float(buf, x),
        Converted::Bool(b) => buf.extend_from_slice(if b { b"true" } else { b"false" }),
        Converted::Text(s) => write_str(buf, &s),
        Converted::Bytes(b) => write_base64(buf, &b),
    }
    Ok(Outcome::Written)
}

/// The temporal converters give None for text (a SELECT's zero date '0000-00-00').
fn text_is_null<'a>(v: &Bound<'_, PyAny>) -> Converted<'a> {
    if v.downcast_exact::<PyString>().is_ok() { Converted::Null } else { Converted::Python }
}
