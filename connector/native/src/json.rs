//! Debezium's JSON-with-schema change records (JsonConverter's bytes).
//!
//! The Python side (connector/events/envelope.py) decides everything per table once: the
//! columns, their conversions and NOT NULL fallbacks, the schema part of each record. Here
//! only the per-row work runs: look each column up, convert it (compiled, convert.rs, for
//! the common types; else its Python converter), write its JSON and frame the record; one
//! call per batch of rows.
//! The bytes are exactly those of Kafka Connect's JsonConverter as the Python reference
//! (tests/reference_encoder.py) writes them.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};

use crate::convert::{self, Conversion, Outcome, Types};

const HEX: &[u8; 16] = b"0123456789abcdef";
const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Python's json encode_basestring (ensure_ascii=False): quotes, backslash and controls.
pub(crate) fn write_str(buf: &mut Vec<u8>, s: &str) {
    buf.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b >= 0x20 && b != b'"' && b != b'\\' {
            continue;
        }
        buf.extend_from_slice(&bytes[start..i]);
        match b {
            b'"' => buf.extend_from_slice(b"\\\""),
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            0x08 => buf.extend_from_slice(b"\\b"),
            0x0c => buf.extend_from_slice(b"\\f"),
            _ => {
                buf.extend_from_slice(b"\\u00");
                buf.push(HEX[(b >> 4) as usize]);
                buf.push(HEX[(b & 15) as usize]);
            }
        }
        start = i + 1;
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

/// JsonConverter's bytes: standard base64 with padding, quoted.
pub(crate) fn write_base64(buf: &mut Vec<u8>, data: &[u8]) {
    buf.push(b'"');
    for chunk in data.chunks(3) {
        let n = match chunk.len() {
            3 => (chunk[0] as u32) << 16 | (chunk[1] as u32) << 8 | chunk[2] as u32,
            2 => (chunk[0] as u32) << 16 | (chunk[1] as u32) << 8,
            _ => (chunk[0] as u32) << 16,
        };
        buf.push(B64[(n >> 18) as usize & 63]);
        buf.push(B64[(n >> 12) as usize & 63]);
        buf.push(if chunk.len() > 1 { B64[(n >> 6) as usize & 63] } else { b'=' });
        buf.push(if chunk.len() > 2 { B64[n as usize & 63] } else { b'=' });
    }
    buf.push(b'"');
}

pub(crate) fn write_int(buf: &mut Vec<u8>, n: i128) {
    buf.extend_from_slice(n.to_string().as_bytes());
}

/// One converted value as `json.dumps` (compact, ensure_ascii=False) writes it; anything
/// but an exact str, bool, int or bytes goes to the Python encoder itself.
fn write_value(buf: &mut Vec<u8>, v: &Bound<'_, PyAny>, dumps: &Bound<'_, PyAny>) -> PyResult<()> {
    if v.is_none() {
        buf.extend_from_slice(b"null");
    } else if let Ok(s) = v.downcast_exact::<PyString>() {
        write_str(buf, s.to_str()?);
    } else if let Ok(b) = v.downcast_exact::<PyBool>() {
        buf.extend_from_slice(if b.is_true() { b"true" } else { b"false" });
    } else if v.is_exact_instance_of::<PyInt>() {
        match v.extract::<i64>() {
            Ok(n) => write_int(buf, n as i128),
            Err(_) => buf.extend_from_slice(v.str()?.to_str()?.as_bytes()),
        }
    } else if let Ok(b) = v.downcast_exact::<PyBytes>() {
        write_base64(buf, b.as_bytes());
    } else {
        let text = dumps.call1((v,))?;
        buf.extend_from_slice(text.downcast::<PyString>()?.to_str()?.as_bytes());
    }
    Ok(())
}

/// A column's compiled conversion as the Python side describes it: (kind, number, members).
pub(crate) type Described<'py> = Option<(String, i64, Vec<Bound<'py, PyString>>)>;

/// A row's JSON object: for each column its name, converter (or None), NOT NULL fallback and
/// compiled conversion (or None: the converter's result is written).
#[pyclass(frozen, module = "connector._native")]
pub struct RowWriter {
    names: Vec<Py<PyString>>,
    heads: Vec<Vec<u8>>,
    converts: Vec<Option<PyObject>>,
    fallbacks: Vec<PyObject>,
    compiled: Vec<Option<Conversion>>,
    types: Types,
    dumps: PyObject,
}

impl RowWriter {
    fn write(&self, py: Python<'_>, buf: &mut Vec<u8>, row: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.names.is_empty() {
            buf.extend_from_slice(b"{}");
            return Ok(());
        }
        let dict = row.downcast_exact::<PyDict>().ok();
        let dumps = self.dumps.bind(py);
        for i in 0..self.names.len() {
            buf.extend_from_slice(&self.heads[i]);
            let name = self.names[i].bind(py);
            let got = match dict {
                Some(d) => d.get_item(name)?,
                None => Some(row.call_method1("get", (name,))?),
            };
            let mut value = got.filter(|v| !v.is_none());
            if let (Some(v), Some(conversion)) = (&value, &self.compiled[i]) {
                let mark = buf.len();
                match convert::write_json(conversion, v, &self.types, buf)? {
                    Outcome::Written => continue,
                    Outcome::Null => value = None,
                    Outcome::Python => buf.truncate(mark),
                }
            }
            if let (Some(v), Some(convert)) = (&value, &self.converts[i]) {
                value = Some(convert.bind(py).call1((v,))?).filter(|v| !v.is_none());
            }
            match value {
                Some(v) => write_value(buf, &v, dumps)?,
                None => write_value(buf, self.fallbacks[i].bind(py), dumps)?,
            }
        }
        buf.push(b'}');
        Ok(())
    }
}

#[pymethods]
impl RowWriter {
    #[new]
    fn new(py: Python<'_>,
           columns: Vec<(Bound<'_, PyString>, PyObject, PyObject, Described<'_>)>,
           dumps: PyObject) -> PyResult<Self> {
        let mut writer = RowWriter { names: vec![], heads: vec![], converts: vec![],
                                     fallbacks: vec![], compiled: vec![],
                                     types: Types::new(py)?, dumps: dumps.clone_ref(py) };
        for (i, (name, convert, fallback, described)) in columns.into_iter().enumerate() {
            let mut head = vec![if i == 0 { b'{' } else { b',' }];
            write_str(&mut head, name.to_str()?);
            head.push(b':');
            writer.heads.push(head);
            writer.names.push(name.unbind());
            writer.converts.push(if convert.is_none(py) { None } else { Some(convert) });
            writer.fallbacks.push(fallback);
            writer.compiled.push(match described {
                Some((kind, number, members)) => Some(Conversion::new(&kind, number, members)?),
                None => None,
            });
        }
        Ok(writer)
    }

    /// The row's JSON text as UTF-8 bytes.
    fn row<'py>(&self, py: Python<'py>, row: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        let mut buf = Vec::with_capacity(256);
        self.write(py, &mut buf, row)?;
        Ok(PyBytes::new(py, &buf))
    }
}

/// A table's key and value records: JsonConverter's schema part around each payload.
#[pyclass(frozen, module = "connector._native")]
pub struct TableRecords {
    value_rows: Py<RowWriter>,
    value_prefix: Vec<u8>,
    value_suffix: &'static [u8],
    key_rows: Option<Py<RowWriter>>,
    key_prefix: Vec<u8>,
    key_suffix: &'static [u8],
}

/// The source block and times shared by every record of a batch.
struct Frame<'a> {
    op: Vec<u8>,
    head: &'a [u8],
    tail: &'a [u8],
    ts_ms: i128,
}

impl TableRecords {
    fn key_into(&self, py: Python<'_>, row: &Bound<'_, PyAny>) -> PyResult<Option<PyObject>> {
        let Some(keys) = &self.key_rows else { return Ok(None) };
        let mut buf = Vec::with_capacity(self.key_prefix.len() + 64);
        buf.extend_from_slice(&self.key_prefix);
        keys.get().write(py, &mut buf, row)?;
        buf.extend_from_slice(self.key_suffix);
        Ok(Some(PyBytes::new(py, &buf).into_any().unbind()))
    }

    #[allow(clippy::too_many_arguments)]
    fn value_into(&self, py: Python<'_>, buf: &mut Vec<u8>, frame: &Frame<'_>,
                  before: Option<&Bound<'_, PyAny>>, after: Option<&Bound<'_, PyAny>>,
                  row: i64, tx: &[u8]) -> PyResult<()> {
        let rows = self.value_rows.get();
        buf.extend_from_slice(&self.value_prefix);
        buf.extend_from_slice(b"{\"before\":");
        match before {
            Some(r) => rows.write(py, buf, r)?,
            None => buf.extend_from_slice(b"null"),
        }
        buf.extend_from_slice(b",\"after\":");
        match after {
            Some(r) => rows.write(py, buf, r)?,
            None => buf.extend_from_slice(b"null"),
        }
        buf.extend_from_slice(b",\"source\":");
        buf.extend_from_slice(frame.head);
        write_int(buf, row as i128);
        buf.extend_from_slice(frame.tail);
        buf.extend_from_slice(b",\"transaction\":");
        buf.extend_from_slice(tx);
        buf.extend_from_slice(b",\"op\":");
        buf.extend_from_slice(&frame.op);
        buf.extend_from_slice(b",\"ts_ms\":");
        write_int(buf, frame.ts_ms);
        buf.extend_from_slice(b",\"ts_us\":");
        write_int(buf, frame.ts_ms * 1000);
        buf.extend_from_slice(b",\"ts_ns\":");
        write_int(buf, frame.ts_ms * 1_000_000);
        buf.push(b'}');
        buf.extend_from_slice(self.value_suffix);
        Ok(())
    }
}

fn raw_bytes<'a>(text: &'a Bound<'_, PyString>) -> PyResult<&'a [u8]> {
    Ok(text.to_str()?.as_bytes())
}

fn op_text(op: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(3);
    write_str(&mut out, op);
    out
}

#[pymethods]
impl TableRecords {
    #[new]
    #[pyo3(signature = (value_rows, value_prefix, key_rows, key_prefix, schemas))]
    fn new(value_rows: Py<RowWriter>, value_prefix: Vec<u8>, key_rows: Option<Py<RowWriter>>,
           key_prefix: Vec<u8>, schemas: (bool, bool)) -> Self {
        TableRecords {
            value_rows, value_prefix, key_rows, key_prefix,
            value_suffix: if schemas.1 { b"}" } else { b"" },
            key_suffix: if schemas.0 { b"}" } else { b"" },
        }
    }

    /// The key record of `row`; None for a table without a key.
    fn key(&self, py: Python<'_>, row: &Bound<'_, PyAny>) -> PyResult<Option<PyObject>> {
        self.key_into(py, row)
    }

    /// One value record; `transaction` is the block's JSON text (None: null).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (op, before, after, head, tail, row, ts_ms, transaction))]
    fn value<'py>(&self, py: Python<'py>, op: &str, before: Option<Bound<'py, PyAny>>,
                  after: Option<Bound<'py, PyAny>>, head: Bound<'py, PyString>,
                  tail: Bound<'py, PyString>, row: i64, ts_ms: i64,
                  transaction: Option<Bound<'py, PyString>>) -> PyResult<Bound<'py, PyBytes>> {
        let frame = Frame { op: op_text(op), head: raw_bytes(&head)?, tail: raw_bytes(&tail)?,
                            ts_ms: ts_ms as i128 };
        let tx = match &transaction {
            Some(t) => raw_bytes(t)?,
            None => b"null".as_slice(),
        };
        let mut buf = Vec::with_capacity(self.value_prefix.len() + 512);
        self.value_into(py, &mut buf, &frame, before.as_ref(), after.as_ref(), row, tx)?;
        Ok(PyBytes::new(py, &buf))
    }

    /// The (key, value) records of (part of) one rows event: `op` "c" or "r" (rows are the
    /// after images), "d" (the before images) or "u" ((before, after) pairs, one key). Row i
    /// is the event's row `first` + i: its source.row, and with `transaction` (id, total,
    /// per table: the counts before the event) its block counts `first` + i + 1 on.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (op, rows, head, tail, ts_ms, transaction, first))]
    fn records<'py>(&self, py: Python<'py>, op: &str, rows: &Bound<'py, PyList>,
                    head: Bound<'py, PyString>, tail: Bound<'py, PyString>, ts_ms: i64,
                    transaction: Option<(Bound<'py, PyString>, i64, i64)>, first: i64)
                    -> PyResult<Bound<'py, PyList>> {
        let frame = Frame { op: op_text(op), head: raw_bytes(&head)?, tail: raw_bytes(&tail)?,
                            ts_ms: ts_ms as i128 };
        let kind = match op {
            "c" | "r" => 0,
            "d" => 1,
            "u" => 2,
            _ => return Err(PyValueError::new_err(format!("records: no batch of op {op:?}"))),
        };
        let mut tx_head = Vec::new();
        if let Some((id, _, _)) = &transaction {
            tx_head.extend_from_slice(b"{\"id\":");
            write_str(&mut tx_head, id.to_str()?);
            tx_head.extend_from_slice(b",\"total_order\":");
        }
        let out = PyList::empty(py);
        let mut buf = Vec::with_capacity(self.value_prefix.len() + 1024);
        let mut tx = Vec::with_capacity(tx_head.len() + 64);
        for (n, item) in rows.iter().enumerate() {
            let i = first + n as i64;
            tx.clear();
            match &transaction {
                Some((_, total, per_table)) => {
                    tx.extend_from_slice(&tx_head);
                    write_int(&mut tx, *total as i128 + i as i128 + 1);
                    tx.extend_from_slice(b",\"data_collection_order\":");
                    write_int(&mut tx, *per_table as i128 + i as i128 + 1);
                    tx.push(b'}');
                }
                None => tx.extend_from_slice(b"null"),
            }
            buf.clear();
            let key = match kind {
                0 => {
                    self.value_into(py, &mut buf, &frame, None, Some(&item), i, &tx)?;
                    self.key_into(py, &item)?
                }
                1 => {
                    self.value_into(py, &mut buf, &frame, Some(&item), None, i, &tx)?;
                    self.key_into(py, &item)?
                }
                _ => {
                    let pair = item.downcast::<PyTuple>()?;
                    let (before, after) = (pair.get_item(0)?, pair.get_item(1)?);
                    self.value_into(py, &mut buf, &frame, Some(&before), Some(&after),
                                    i, &tx)?;
                    self.key_into(py, &after)?
                }
            };
            let value = PyBytes::new(py, &buf);
            out.append(PyTuple::new(py, [key.into_pyobject(py)?.into_any(), value.into_any()])?)?;
        }
        Ok(out)
    }
}

