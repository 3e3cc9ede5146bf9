//! One Avro value's binary as fastavro writes it: a Python value (a converter's result), or
//! a compiled conversion's (convert.rs) as the Python value it stands for.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::convert::Converted;

/// An Avro type as the writer needs it (unions are a null and one other branch).
pub enum Ty {
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Str,
    Bytes,
    /// The index of the null branch (0 or 1) and the other branch.
    Union(u8, Box<Ty>),
    Array(Box<Ty>),
    Record(Vec<(Py<PyString>, Ty)>),
}

/// The description built by avro_writer.py: ("long",), ("union", null_index, type),
/// ("array", items), ("record", [(name, type), ...]).
pub fn parse_ty(d: &Bound<'_, PyAny>) -> PyResult<Ty> {
    let t = d.downcast::<PyTuple>()?;
    let kind: String = t.get_item(0)?.extract()?;
    Ok(match kind.as_str() {
        "boolean" => Ty::Boolean,
        "int" => Ty::Int,
        "long" => Ty::Long,
        "float" => Ty::Float,
        "double" => Ty::Double,
        "string" => Ty::Str,
        "bytes" => Ty::Bytes,
        "union" => {
            let null: u8 = t.get_item(1)?.extract()?;
            if null > 1 {
                return Err(PyValueError::new_err("union: the null branch is 0 or 1"));
            }
            Ty::Union(null, Box::new(parse_ty(&t.get_item(2)?)?))
        }
        "array" => Ty::Array(Box::new(parse_ty(&t.get_item(1)?)?)),
        "record" => {
            let mut fields = vec![];
            for f in t.get_item(1)?.try_iter()? {
                let (name, ty): (Bound<'_, PyString>, Bound<'_, PyAny>) = f?.extract()?;
                fields.push((name.unbind(), parse_ty(&ty)?));
            }
            Ty::Record(fields)
        }
        _ => return Err(PyValueError::new_err(format!("no Avro writer for {kind:?}"))),
    })
}

pub fn write_long(buf: &mut Vec<u8>, n: i64) {
    let mut z = ((n << 1) ^ (n >> 63)) as u64;
    while z >= 0x80 {
        buf.push((z as u8) | 0x80);
        z >>= 7;
    }
    buf.push(z as u8);
}

pub fn write_text(buf: &mut Vec<u8>, data: &[u8]) {
    write_long(buf, data.len() as i64);
    buf.extend_from_slice(data);
}

fn exact_int(v: &Bound<'_, PyAny>) -> Option<i64> {
    if v.is_exact_instance_of::<PyInt>() { v.extract::<i64>().ok() } else { None }
}

/// Writes `v` as `ty`; false (the buffer then holds a partial value) when `v` is not one
/// this writer takes, and fastavro is to write it.
pub fn write(buf: &mut Vec<u8>, ty: &Ty, v: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(match ty {
        Ty::Union(null, inner) => {
            if v.is_none() {
                buf.push(*null << 1);
                true
            } else {
                buf.push((1 - *null) << 1);
                write(buf, inner, v)?
            }
        }
        Ty::Long => match exact_int(v) {
            Some(n) => { write_long(buf, n); true }
            None => false,
        },
        Ty::Int => match exact_int(v).filter(|n| i32::try_from(*n).is_ok()) {
            Some(n) => { write_long(buf, n); true }
            None => false,
        },
        Ty::Boolean => match v.downcast_exact::<PyBool>() {
            Ok(b) => { buf.push(b.is_true() as u8); true }
            Err(_) => false,
        },
        Ty::Double => match v.downcast_exact::<PyFloat>() {
            Ok(f) => { buf.extend_from_slice(&f.value().to_le_bytes()); true }
            Err(_) => false,
        },
        Ty::Float => match v.downcast_exact::<PyFloat>() {
            Ok(f) => write_float(buf, f.value()),
            Err(_) => false,
        },
        Ty::Str => match v.downcast_exact::<PyString>() {
            Ok(s) => match s.to_str() {
                Ok(text) => { write_text(buf, text.as_bytes()); true }
                Err(_) => false, // lone surrogates: fastavro raises its own error
            },
            Err(_) => false,
        },
        Ty::Bytes => match v.downcast_exact::<PyBytes>() {
            Ok(b) => { write_text(buf, b.as_bytes()); true }
            Err(_) => false,
        },
        Ty::Array(items) => match v.downcast_exact::<PyList>() {
            Ok(list) => {
                if !list.is_empty() {
                    write_long(buf, list.len() as i64);
                    for item in list.iter() {
                        if !write(buf, items, &item)? {
                            return Ok(false);
                        }
                    }
                }
                buf.push(0);
                true
            }
            Err(_) => false,
        },
        Ty::Record(fields) => match v.downcast_exact::<PyDict>() {
            Ok(d) => {
                if d.contains("-type")? {
                    return Ok(false); // fastavro's named-union notation
                }
                for (name, fty) in fields {
                    match d.get_item(name.bind(v.py()))? {
                        Some(x) if write(buf, fty, &x)? => {}
                        _ => return Ok(false), // missing: fastavro's default or error
                    }
                }
                true
            }
            Err(_) => false,
        },
    })
}


/// A Python float as an Avro float ("<f"); false for what fastavro's own conversion decides
/// (NaN payloads, overflow to infinity).
fn write_float(buf: &mut Vec<u8>, x: f64) -> bool {
    let narrow = x as f32;
    if x.is_nan() || (narrow.is_infinite() && x.is_finite()) {
        return false;
    }
    buf.extend_from_slice(&narrow.to_le_bytes());
    true
}

/// Writes a compiled conversion's value as `ty`, as `write` writes the Python value it stands
/// for (an int, float, bool, str or bytes); false (the buffer then holds a partial value)
/// when `write` would not take that value either, and the Python way is to run.
pub fn write_converted(buf: &mut Vec<u8>, ty: &Ty, c: &Converted<'_>) -> bool {
    match (ty, c) {
        (Ty::Union(null, inner), _) => {
            buf.push((1 - *null) << 1);
            write_converted(buf, inner, c)
        }
        (Ty::Long, Converted::Int(n)) => match i64::try_from(*n) {
            Ok(n) => { write_long(buf, n); true }
            Err(_) => false,
        },
        (Ty::Int, Converted::Int(n)) => match i32::try_from(*n) {
            Ok(n) => { write_long(buf, n as i64); true }
            Err(_) => false,
        },
        (Ty::Boolean, Converted::Bool(b)) => { buf.push(*b as u8); true }
        (Ty::Double, Converted::Float(x)) => { buf.extend_from_slice(&x.to_le_bytes()); true }
        (Ty::Float, Converted::Float(x)) => write_float(buf, *x),
        (Ty::Str, Converted::Text(s)) => { write_text(buf, s.as_bytes()); true }
        (Ty::Bytes, Converted::Bytes(b)) => { write_text(buf, b); true }
        _ => false,
    }
}
