//! gtidmark's compiled module: the per-row work of the hot path, called once per batch.
//!
//! The Python side decides everything per table once; these modules only run per row.
//! - `json`: Debezium's JSON-with-schema change records, byte for byte as Kafka Connect's
//!   JsonConverter (the Python reference: tests/reference_encoder.py).
//! - `avro`: the same records in Confluent's Avro framing, byte for byte as fastavro writes
//!   them (the Python reference: tests/reference_avro.py).

use pyo3::prelude::*;

mod avro;
mod json;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<json::RowWriter>()?;
    m.add_class::<json::TableRecords>()?;
    m.add_class::<avro::AvroRows>()?;
    m.add_class::<avro::AvroRecords>()?;
    Ok(())
}
