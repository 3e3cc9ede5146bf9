//! Confluent Avro change records (AvroConverter's bytes), as fastavro writes them.
//!
//! The Python side (connector/events/avro_writer.py) derives from the registered Avro schema
//! a description of each column's type and hands it here once per table, with the column's
//! converter, NOT NULL fallback and compiled conversion as for the JSON writer. Per row only
//! the work runs: look each column up, convert it (compiled, convert.rs, for the common
//! types; else its Python converter), write its Avro binary (avro_value.rs). A value outside
//! what is written here exactly (a NaN float, an int beyond its type, an unexpected Python
//! type) goes to the column's Python writer (fastavro), so the bytes, or the error, are
//! always fastavro's.

use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::avro_value::{parse_ty, write, write_converted, write_long, write_text, Ty};
use crate::convert::{convert, Conversion, Converted, Types};
use crate::json::Described;

/// A row's Avro record: per column its name, type, converter (or None), NOT NULL fallback,
/// the Python writer of a value this one does not take, and compiled conversion (or None).
#[pyclass(frozen, module = "connector._native")]
pub struct AvroRows {
    names: Vec<Py<PyString>>,
    types: Vec<Ty>,
    converts: Vec<Option<PyObject>>,
    fallbacks: Vec<PyObject>,
    slow: Vec<PyObject>,
    compiled: Vec<Option<Conversion>>,
    conversion_types: Types,
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
            let start = buf.len();
            if let (Some(v), Some(conversion)) = (&value, &self.compiled[i]) {
                match convert(conversion, v, &self.conversion_types)? {
                    Converted::Null => value = None,
                    Converted::Python => {}
                    c => {
                        if write_converted(buf, &self.types[i], &c) {
                            continue;
                        }
                        buf.truncate(start); // the Python way decides (fastavro's bytes)
                    }
                }
            }
            if let (Some(v), Some(convert)) = (&value, &self.converts[i]) {
                value = Some(convert.bind(py).call1((v,))?).filter(|v| !v.is_none());
            }
            let v = match value {
                Some(v) => v,
                None => self.fallbacks[i].bind(py).clone(),
            };
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
           columns: Vec<(Bound<'_, PyString>, Bound<'_, PyAny>, PyObject, PyObject, PyObject,
                         Described<'_>)>)
           -> PyResult<Self> {
        let mut rows = AvroRows { names: vec![], types: vec![], converts: vec![],
                                  fallbacks: vec![], slow: vec![], compiled: vec![],
                                  conversion_types: Types::new(py)? };
        for (name, ty, convert, fallback, slow, described) in columns {
            rows.names.push(name.unbind());
            rows.types.push(parse_ty(&ty)?);
            rows.converts.push(if convert.is_none(py) { None } else { Some(convert) });
            rows.fallbacks.push(fallback);
            rows.slow.push(slow);
            rows.compiled.push(match described {
                Some((kind, number, members)) => Some(Conversion::new(&kind, number, members)?),
                None => None,
            });
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
