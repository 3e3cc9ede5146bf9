//! Row images of a FULL-image rows event, decoded to the objects mysql-replication gives.
//!
//! The Python side (connector/binlog/rowimages.py) decides per table version whether its
//! columns all take this path and describes them once; here only the per-row work runs:
//! one call per rows event body. Every read behaves as the Python reference
//! (tests/reference_rowimages.py) does on the same bytes, short or invalid ones included:
//! reads past the buffer see Python's short slices, the same exception types are raised.

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyList, PySet, PyString, PyTuple, PyType};
use pyo3::IntoPyObjectExt;

use crate::rowbytes::{be_uint, civil, datetime_state, decimal_groups, decimal_text, le_uint,
                      micros, signed, sl, valid_date, FSP_BYTES};

/// How a string column's bytes become its value.
enum Text {
    /// Python's strict UTF-8 (`bytes.decode()`).
    Utf8,
    /// A single-byte charset (its codec's name): each byte's character, u32::MAX where the
    /// codec has none; true when it maps ASCII to itself.
    Table(Py<PyString>, Box<[u32; 256]>, bool),
    /// Any other codec: `bytes.decode(name)`.
    Codec(Py<PyString>),
    /// No codec: the bytes, '' when empty (what `b'' or ''` gives).
    Bytes,
}

enum Kind {
    Int { size: usize, unsigned: bool },
    Int24 { unsigned: bool },
    Float,
    Double,
    Str { prefix: usize, text: Text },
    Decimal { size: usize, scale: u32, groups: Vec<(usize, u32)> },
    Date,
    DateTime { frac: usize, fsp: u32 },
    Timestamp { frac: usize, fsp: u32 },
    Year,
    Enum { size: usize, members: Vec<PyObject> },
    Set { size: usize, members: Vec<PyObject> },
}

/// A date or datetime from its pickle state (`date(b'...')`, `datetime(b'...')`: the bytes
/// `__reduce__` gives, a constructor path that parses no arguments), about a third of the
/// cost of calling the class with integers.
/// The fields must be valid: the state is not checked.
fn from_state<'py>(py: Python<'py>, class: &PyObject, state: &[u8])
                   -> PyResult<Bound<'py, PyAny>> {
    class.bind(py).call1((PyBytes::new(py, state),))
}

/// One table version's images: its columns, their interned names, the classes it builds.
#[pyclass(frozen, module = "connector._native")]
pub struct RowImages {
    kinds: Vec<Kind>,
    names: Vec<Py<PyString>>,
    nulls: usize,
    decimal: PyObject,
    date: PyObject,
    datetime: PyObject,
    struct_error: Py<PyType>,
    empty: Py<PyString>,
}

/// A column as connector/binlog/rowimages.py describes it (ColumnShape there).
type Description = (String, String, bool, usize, u32, u32, Option<String>, Option<Vec<u32>>,
                    Option<Vec<PyObject>>);

/// The decoding of a column; ValueError for metadata MySQL does not write.
fn kind_of(py: Python<'_>, d: Description) -> PyResult<Kind> {
    let (_, kind, unsigned, size, precision, scale, codec, table, members) = d;
    Ok(match kind.as_str() {
        "int" if matches!(size, 1 | 2 | 4 | 8) => Kind::Int { size, unsigned },
        "int24" => Kind::Int24 { unsigned },
        "float" => Kind::Float,
        "double" => Kind::Double,
        "str" if (1..=4).contains(&size) => {
            let text = match (codec, table) {
                (Some(c), Some(t)) if t.len() == 256 => {
                    let ascii = (0..128).all(|b| t[b] == b as u32);
                    let mut chars = Box::new([0u32; 256]);
                    chars.copy_from_slice(&t);
                    Text::Table(PyString::intern(py, &c).unbind(), chars, ascii)
                }
                (Some(c), None) if c == "utf-8" => Text::Utf8,
                (Some(c), None) => Text::Codec(PyString::intern(py, &c).unbind()),
                (None, None) => Text::Bytes,
                _ => return Err(PyValueError::new_err("a charset table has 256 entries")),
            };
            Kind::Str { prefix: size, text }
        }
        "decimal" if (1..=65).contains(&precision) && scale <= precision => {
            let groups = decimal_groups(precision, scale);
            let size = groups.iter().map(|g| g.0).sum();
            Kind::Decimal { size, scale, groups }
        }
        "date" => Kind::Date,
        "datetime" if precision <= 6 => Kind::DateTime { frac: FSP_BYTES[precision as usize],
                                                         fsp: precision },
        "timestamp" if precision <= 6 => Kind::Timestamp { frac: FSP_BYTES[precision as usize],
                                                           fsp: precision },
        "year" => Kind::Year,
        "enum" if (1..=8).contains(&size) => {
            Kind::Enum { size, members: members.unwrap_or_default() }
        }
        "set" if (1..=8).contains(&size) => {
            Kind::Set { size, members: members.unwrap_or_default() }
        }
        _ => return Err(PyValueError::new_err(format!("no row decoding for {kind} ({size}, \
                                                       {precision}, {scale})"))),
    })
}

impl RowImages {
    /// The Decimal of a NEWDECIMAL's bytes, built from its text (decimal_text).
    fn decimal<'py>(&self, py: Python<'py>, raw: &[u8], size: usize, scale: u32,
                    groups: &[(usize, u32)]) -> PyResult<Bound<'py, PyAny>> {
        let mut text = [0u8; 96];
        let n = decimal_text(raw, size, scale, groups, &mut text);
        let text = std::str::from_utf8(&text[..n]).unwrap();
        self.decimal.bind(py).call1((text,))
    }

    fn text<'py>(&self, py: Python<'py>, v: &[u8], text: &Text) -> PyResult<Bound<'py, PyAny>> {
        match text {
            // CPython's own strict decoder (one pass, its UnicodeDecodeError on invalid bytes)
            Text::Utf8 => unsafe {
                let s = pyo3::ffi::PyUnicode_DecodeUTF8(v.as_ptr().cast(), v.len() as isize,
                                                        c"strict".as_ptr());
                Bound::from_owned_ptr_or_err(py, s)
            },
            Text::Table(name, chars, ascii) => {
                if *ascii && v.is_ascii() {
                    return Ok(PyString::new(py, std::str::from_utf8(v).unwrap()).into_any());
                }
                let mut s = String::with_capacity(v.len() * 2);
                for &b in v {
                    match char::from_u32(chars[b as usize]) {
                        Some(c) => s.push(c),
                        // undefined byte: the codec raises its own error
                        None => {
                            return PyBytes::new(py, v).call_method1("decode", (name.bind(py),));
                        }
                    }
                }
                Ok(PyString::new(py, &s).into_any())
            }
            Text::Codec(name) => PyBytes::new(py, v).call_method1("decode", (name.bind(py),)),
            Text::Bytes if v.is_empty() => Ok(self.empty.bind(py).clone().into_any()),
            Text::Bytes => Ok(PyBytes::new(py, v).into_any()),
        }
    }

    /// What struct.unpack_from raises on a buffer too short.
    fn struct_error(&self, py: Python<'_>, size: usize, at: usize, len: usize) -> PyErr {
        PyErr::from_type(self.struct_error.bind(py).clone(), format!(
            "unpack_from requires a buffer of at least {} bytes for unpacking {size} bytes at \
             offset {at} (actual buffer size is {len})", at + size))
    }

    /// The microseconds of the fraction at `at` (0: none, or a negative one); ValueError
    /// where the reference's datetime.replace(microsecond=...) refuses them.
    fn fraction(data: &[u8], at: usize, frac: usize, fsp: u32) -> PyResult<i64> {
        if frac == 0 {
            return Ok(0);
        }
        let raw = sl(data, at, at + frac);
        let us = micros(signed(be_uint(raw), raw.len()), fsp);
        if us > 999_999 {
            return Err(PyValueError::new_err("microsecond must be in 0..999999"));
        }
        Ok(us.max(0))
    }

    /// Column `kind`'s value at `pos` (not NULL), `pos` moved past it.
    fn value<'py>(&self, py: Python<'py>, data: &[u8], pos: &mut usize, kind: &Kind)
                  -> PyResult<Bound<'py, PyAny>> {
        let p = *pos;
        let fixed = |size: usize| -> PyResult<&[u8]> {
            if p + size > data.len() {
                return Err(self.struct_error(py, size, p, data.len()));
            }
            Ok(&data[p..p + size])
        };
        Ok(match kind {
            Kind::Int { size, unsigned } => {
                let n = le_uint(fixed(*size)?);
                *pos = p + size;
                if *unsigned { n.into_bound_py_any(py)? } else {
                    signed(n, *size).into_bound_py_any(py)?
                }
            }
            Kind::Int24 { unsigned } => {
                let s = sl(data, p, p + 3);
                *pos = p + 3;
                if *unsigned { le_uint(s).into_bound_py_any(py)? } else {
                    signed(le_uint(s), s.len()).into_bound_py_any(py)?
                }
            }
            Kind::Float => {
                let f = f32::from_le_bytes(fixed(4)?.try_into().unwrap());
                *pos = p + 4;
                PyFloat::new(py, f as f64).into_any()
            }
            Kind::Double => {
                let f = f64::from_le_bytes(fixed(8)?.try_into().unwrap());
                *pos = p + 8;
                PyFloat::new(py, f).into_any()
            }
            Kind::Str { prefix, text } => {
                let n = le_uint(sl(data, p, p + prefix)) as usize;
                *pos = p + prefix + n;
                self.text(py, sl(data, p + prefix, p + prefix + n), text)?
            }
            Kind::Decimal { size, scale, groups } => {
                *pos = p + size;
                self.decimal(py, sl(data, p, p + size), *size, *scale, groups)?
            }
            Kind::Date => {
                let t = le_uint(sl(data, p, p + 3));
                *pos = p + 3;
                let (y, m, d) = (t >> 9 & 0x7FFF, t >> 5 & 15, t & 31);
                let (y, m, d) = (y as i64, m as i64, d as i64);
                if y == 0 || m == 0 || d == 0 {
                    py.None().into_bound(py)
                } else if valid_date(y, m, d) {
                    from_state(py, &self.date, &[(y >> 8) as u8, y as u8, m as u8, d as u8])?
                } else {
                    self.date.bind(py).call1((y, m, d))?  // its ValueError, as the reference's
                }
            }
            Kind::DateTime { frac, fsp } => {
                let t = be_uint(sl(data, p, p + 5)) as i64;
                *pos = p + 5 + frac;
                let ym = t >> 22 & 0x1FFFF;
                let (y, m, d) = (ym / 13, ym % 13, t >> 17 & 31);
                let (h, mi, s) = (t >> 12 & 31, t >> 6 & 63, t & 63);
                if !valid_date(y, m, d) || h > 23 || mi > 59 || s > 59 {
                    py.None().into_bound(py)  // the reference's datetime() refused it
                } else {
                    let us = Self::fraction(data, p + 5, *frac, *fsp)?;
                    from_state(py, &self.datetime, &datetime_state(y, m, d, h, mi, s, us))?
                }
            }
            Kind::Timestamp { frac, fsp } => {
                let raw = sl(data, p, p + 4);
                let seconds = signed(be_uint(raw), raw.len());
                *pos = p + 4 + frac;
                let (y, m, d) = civil(seconds.div_euclid(86_400));
                let t = seconds.rem_euclid(86_400);
                let us = Self::fraction(data, p + 4, *frac, *fsp)?;
                let state = datetime_state(y, m, d, t / 3600, t / 60 % 60, t % 60, us);
                from_state(py, &self.datetime, &state)?  // 1901-2038: always valid
            }
            Kind::Year => {
                let Some(&y) = data.get(p) else {
                    return Err(PyIndexError::new_err("index out of range"));
                };
                *pos = p + 1;
                (y as u32 + 1900).into_bound_py_any(py)?
            }
            Kind::Enum { size, members } => {
                let i = le_uint(sl(data, p, p + size));
                *pos = p + size;
                if members.is_empty() {
                    py.None().into_bound(py)
                } else {
                    match members.get(i as usize) {
                        Some(m) => m.bind(py).clone(),
                        None => return Err(PyIndexError::new_err("list index out of range")),
                    }
                }
            }
            Kind::Set { size, members } => {
                let t = le_uint(sl(data, p, p + size));
                *pos = p + size;
                let set = PySet::empty(py)?;
                for (b, m) in members.iter().enumerate().take(64) {
                    if t >> b & 1 == 1 {
                        set.add(m)?;
                    }
                }
                if set.is_empty() { self.empty.bind(py).clone().into_any() } else { set.into_any() }
            }
        })
    }

    /// One image: the NULL bitmap, then each non-NULL value; `pos` moved past it.
    fn read<'py>(&self, py: Python<'py>, data: &[u8], pos: &mut usize)
                 -> PyResult<Bound<'py, PyDict>> {
        let bits = sl(data, *pos, *pos + self.nulls);
        *pos += self.nulls;
        let image = PyDict::new(py);
        for (i, kind) in self.kinds.iter().enumerate() {
            let null = bits.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1);
            let v = if null { py.None().into_bound(py) } else { self.value(py, data, pos, kind)? };
            image.set_item(self.names[i].bind(py), v)?;
        }
        Ok(image)
    }
}

#[pymethods]
impl RowImages {
    /// Each column: (name, kind, unsigned, size, precision or fsp, scale, codec, charset
    /// table, members); see connector/binlog/rowimages.py.
    #[new]
    fn new(py: Python<'_>, columns: Vec<Description>) -> PyResult<Self> {
        if columns.is_empty() {
            return Err(PyValueError::new_err("a row image has at least one column"));
        }
        let names = columns.iter().map(|c| PyString::intern(py, &c.0).unbind()).collect();
        let nulls = columns.len().div_ceil(8);
        let kinds = columns.into_iter().map(|c| kind_of(py, c)).collect::<PyResult<_>>()?;
        let dt = py.import("datetime")?;
        Ok(RowImages {
            kinds, names, nulls,
            decimal: py.import("decimal")?.getattr("Decimal")?.unbind(),
            date: dt.getattr("date")?.unbind(),
            datetime: dt.getattr("datetime")?.unbind(),
            struct_error: py.import("struct")?.getattr("error")?.downcast_into::<PyType>()?
                .unbind(),
            empty: PyString::intern(py, "").unbind(),
        })
    }

    /// The images of a rows event's body from `pos` (past its bitmaps) to `end`: dicts, or
    /// (before, after) tuples when `update`.
    fn rows<'py>(&self, py: Python<'py>, data: &[u8], pos: usize, end: usize, update: bool)
                 -> PyResult<Bound<'py, PyList>> {
        let rows = PyList::empty(py);
        let mut pos = pos;
        while pos < end {
            let image = self.read(py, data, &mut pos)?;
            if update {
                let after = self.read(py, data, &mut pos)?;
                rows.append(PyTuple::new(py, [image, after])?)?;
            } else {
                rows.append(image)?;
            }
        }
        Ok(rows)
    }

    /// One image at `pos` and the position after it.
    fn image<'py>(&self, py: Python<'py>, data: &[u8], pos: usize)
                  -> PyResult<(Bound<'py, PyDict>, usize)> {
        let mut pos = pos;
        let image = self.read(py, data, &mut pos)?;
        Ok((image, pos))
    }
}
