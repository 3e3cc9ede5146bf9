//! Confluent Avro change records (AvroConverter's bytes), as fastavro writes them.
//!
//! The Python side (connector/events/avro_writer.py) derives from the registered Avro schema
//! a description of each column's type and hands it here once per table, with the column's
//! converter and NOT NULL fallback as for the JSON writer. Per row only the work runs: look
//! each column up, convert it (a Python callable), write its Avro binary. A value outside
//! what is written here exactly (a NaN float, an int beyond its type, an unexpected Python
//! type) goes to the column's Python writer (fastavro), so the bytes, or the error, are
//! always fastavro's.

use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// An Avro type as the writer needs it (unions are a null and one other branch).
enum Ty {
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
fn parse_ty(d: &Bound<'_, PyAny>) -> PyResult<Ty> {
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

fn write_long(buf: &mut Vec<u8>, n: i64) {
    let mut z = ((n << 1) ^ (n >> 63)) as u64;
    while z >= 0x80 {
        buf.push((z as u8) | 0x80);
        z >>= 7;
    }
    buf.push(z as u8);
}

fn write_text(buf: &mut Vec<u8>, data: &[u8]) {
    write_long(buf, data.len() as i64);
    buf.extend_from_slice(data);
}

fn exact_int(v: &Bound<'_, PyAny>) -> Option<i64> {
    if v.is_exact_instance_of::<PyInt>() { v.extract::<i64>().ok() } else { None }
}

/// Writes `v` as `ty`; false (the buffer then holds a partial value) when `v` is not one
/// this writer takes, and fastavro is to write it.
fn write(buf: &mut Vec<u8>, ty: &Ty, v: &Bound<'_, PyAny>) -> PyResult<bool> {
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
            Ok(f) => {
                let x = f.value();
                let narrow = x as f32;
                // NaN payloads and overflow to inf: fastavro's own conversion decides
                if x.is_nan() || (narrow.is_infinite() && x.is_finite()) {
                    false
                } else {
                    buf.extend_from_slice(&narrow.to_le_bytes());
                    true
                }
            }
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

/// A row's Avro record: per column its name, type, converter (or None), NOT NULL fallback
/// and the Python writer of a value this one does not take.
#[pyclass(frozen, module = "connector._native")]
pub struct AvroRows {
    names: Vec<Py<PyString>>,
    types: Vec<Ty>,
    converts: Vec<Option<PyObject>>,
    fallbacks: Vec<PyObject>,
    slow: Vec<PyObject>,
}

impl AvroRows {
    fn write(&self, py: Python<'_>, buf: &mut Vec<u8>, row: &Bound<'_, PyAny>) -> PyResult<()> {
        let dict = row.downcast_exact::<PyDict>().ok();
        for i in 0..self.names.len() {
            let name = self.names[i].bind(py);
            let got = match dict {
                Some(d) => d.get_item(name)?,
                None => Some(row.call_method1("get", (name,))?),
            };
            let mut value = got.filter(|v| !v.is_none());
            if let (Some(v), Some(convert)) = (&value, &self.converts[i]) {
                value = Some(convert.bind(py).call1((v,))?).filter(|v| !v.is_none());
            }
            let v = match value {
                Some(v) => v,
                None => self.fallbacks[i].bind(py).clone(),
            };
            let start = buf.len();
            if !write(buf, &self.types[i], &v)? {
                buf.truncate(start);
                let out = self.slow[i].bind(py).call1((v,))?;
                buf.extend_from_slice(out.downcast::<PyBytes>()?.as_bytes());
            }
        }
        Ok(())
    }
}

#[pymethods]
impl AvroRows {
    #[new]
    #[allow(clippy::type_complexity)]
    fn new(py: Python<'_>,
           columns: Vec<(Bound<'_, PyString>, Bound<'_, PyAny>, PyObject, PyObject, PyObject)>)
           -> PyResult<Self> {
        let mut rows = AvroRows { names: vec![], types: vec![], converts: vec![],
                                  fallbacks: vec![], slow: vec![] };
        for (name, ty, convert, fallback, slow) in columns {
            rows.names.push(name.unbind());
            rows.types.push(parse_ty(&ty)?);
            rows.converts.push(if convert.is_none(py) { None } else { Some(convert) });
            rows.fallbacks.push(fallback);
            rows.slow.push(slow);
        }
        Ok(rows)
    }

    /// The row's record with Confluent's framing (`header`: magic byte and schema id).
    fn record<'py>(&self, py: Python<'py>, header: &[u8], row: &Bound<'py, PyAny>)
                   -> PyResult<Bound<'py, PyBytes>> {
        let mut buf = Vec::with_capacity(256);
        buf.extend_from_slice(header);
        self.write(py, &mut buf, row)?;
        Ok(PyBytes::new(py, &buf))
    }
}

/// A table's Avro envelope (before, after, source, transaction, op, ts_ms/us/ns) and key.
#[pyclass(frozen, module = "connector._native")]
pub struct AvroRecords {
    value_rows: Py<AvroRows>,
    key_rows: Option<Py<AvroRows>>,
}

/// What every record of a batch shares: framing, the source block around `row`, op, times.
struct Frame<'a> {
    header: &'a [u8],
    head: &'a [u8],
    tail: &'a [u8],
    end: Vec<u8>,
}

fn frame<'a>(header: &'a [u8], head: &'a [u8], tail: &'a [u8], op: &str, ts_ms: i64)
             -> PyResult<Frame<'a>> {
    let overflow = || PyOverflowError::new_err("ts_ms: the nanoseconds exceed a long");
    let mut end = Vec::with_capacity(32);
    write_text(&mut end, op.as_bytes());
    for scale in [1i64, 1000, 1_000_000] {
        end.push(2); // ["null", "long"]: the long
        write_long(&mut end, ts_ms.checked_mul(scale).ok_or_else(overflow)?);
    }
    Ok(Frame { header, head, tail, end })
}

impl AvroRecords {
    fn side(&self, py: Python<'_>, buf: &mut Vec<u8>, image: Option<&Bound<'_, PyAny>>)
            -> PyResult<()> {
        match image {
            Some(r) => {
                buf.push(2); // ["null", Value]
                self.value_rows.get().write(py, buf, r)
            }
            None => { buf.push(0); Ok(()) }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn value_into(&self, py: Python<'_>, buf: &mut Vec<u8>, f: &Frame<'_>,
                  before: Option<&Bound<'_, PyAny>>, after: Option<&Bound<'_, PyAny>>,
                  row: i64, tx: Option<(&str, i64, i64)>) -> PyResult<()> {
        buf.extend_from_slice(f.header);
        self.side(py, buf, before)?;
        self.side(py, buf, after)?;
        buf.extend_from_slice(f.head);
        write_long(buf, row); // an int in the schema, written as fastavro does: a varint
        buf.extend_from_slice(f.tail);
        match tx {
            Some((id, total, per_table)) => {
                buf.push(2); // ["null", event.block]
                write_text(buf, id.as_bytes());
                write_long(buf, total);
                write_long(buf, per_table);
            }
            None => buf.push(0),
        }
        buf.extend_from_slice(&f.end);
        Ok(())
    }

    fn key_of(&self, py: Python<'_>, header: Option<&[u8]>, row: &Bound<'_, PyAny>)
              -> PyResult<Option<PyObject>> {
        let (Some(keys), Some(header)) = (&self.key_rows, header) else { return Ok(None) };
        Ok(Some(keys.get().record(py, header, row)?.into_any().unbind()))
    }
}

#[pymethods]
impl AvroRecords {
    #[new]
    #[pyo3(signature = (value_rows, key_rows))]
    fn new(value_rows: Py<AvroRows>, key_rows: Option<Py<AvroRows>>) -> Self {
        AvroRecords { value_rows, key_rows }
    }

    /// One value record: `head`/`tail` the source block's Avro bytes around `row`,
    /// `transaction` (id, total_order, data_collection_order) or None.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (header, op, before, after, head, tail, row, ts_ms, transaction))]
    fn value<'py>(&self, py: Python<'py>, header: &[u8], op: &str,
                  before: Option<Bound<'py, PyAny>>, after: Option<Bound<'py, PyAny>>,
                  head: &[u8], tail: &[u8], row: i64, ts_ms: i64,
                  transaction: Option<(Bound<'py, PyString>, i64, i64)>)
                  -> PyResult<Bound<'py, PyBytes>> {
        let f = frame(header, head, tail, op, ts_ms)?;
        let tx = match &transaction {
            Some((id, total, per_table)) => Some((id.to_str()?, *total, *per_table)),
            None => None,
        };
        let mut buf = Vec::with_capacity(512);
        self.value_into(py, &mut buf, &f, before.as_ref(), after.as_ref(), row, tx)?;
        Ok(PyBytes::new(py, &buf))
    }

    /// The (key, value) records of (part of) one rows event, as json.rs's
    /// `TableRecords.records`; `headers` the key's and value's framing (no key: None).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (headers, op, rows, head, tail, ts_ms, transaction, first))]
    fn records<'py>(&self, py: Python<'py>, headers: (Option<Vec<u8>>, Vec<u8>), op: &str,
                    rows: &Bound<'py, PyList>, head: &[u8], tail: &[u8], ts_ms: i64,
                    transaction: Option<(Bound<'py, PyString>, i64, i64)>, first: i64)
                    -> PyResult<Bound<'py, PyList>> {
        let (key_header, value_header) = headers;
        let f = frame(&value_header, head, tail, op, ts_ms)?;
        let kind = match op {
            "c" | "r" => 0,
            "d" => 1,
            "u" => 2,
            _ => return Err(PyValueError::new_err(format!("records: no batch of op {op:?}"))),
        };
        let tx_id = match &transaction {
            Some((id, _, _)) => Some(id.to_str()?),
            None => None,
        };
        let overflow = || PyOverflowError::new_err("transaction order exceeds a long");
        let out = PyList::empty(py);
        let mut buf = Vec::with_capacity(1024);
        for (n, item) in rows.iter().enumerate() {
            let i = first + n as i64;
            let tx = match (&transaction, tx_id) {
                (Some((_, total, per_table)), Some(id)) => Some((
                    id,
                    total.checked_add(i + 1).ok_or_else(overflow)?,
                    per_table.checked_add(i + 1).ok_or_else(overflow)?)),
                _ => None,
            };
            buf.clear();
            let key = match kind {
                0 => {
                    self.value_into(py, &mut buf, &f, None, Some(&item), i, tx)?;
                    self.key_of(py, key_header.as_deref(), &item)?
                }
                1 => {
                    self.value_into(py, &mut buf, &f, Some(&item), None, i, tx)?;
                    self.key_of(py, key_header.as_deref(), &item)?
                }
                _ => {
                    let pair = item.downcast::<PyTuple>()?;
                    let (before, after) = (pair.get_item(0)?, pair.get_item(1)?);
                    self.value_into(py, &mut buf, &f, Some(&before), Some(&after), i, tx)?;
                    self.key_of(py, key_header.as_deref(), &after)?
                }
            };
            let value = PyBytes::new(py, &buf);
            out.append(PyTuple::new(py, [key.into_pyobject(py)?.into_any(), value.into_any()])?)?;
        }
        Ok(out)
    }
}
