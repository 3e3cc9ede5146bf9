//! gtidmark's compiled module: the per-row work of the hot path, called once per batch.
//!
//! The Python side decides everything per table once; these modules only run per row.
//! - `json`: Debezium's JSON-with-schema change records, byte for byte as Kafka Connect's
//!   JsonConverter (the Python reference: tests/reference_encoder.py).
//! - `avro`: the same records in Confluent's Avro framing, byte for byte as fastavro writes
//!   them (the Python reference: tests/reference_avro.py).
//! - `convert`: the value conversions of the common column types (connector/events/values.py's
//!   converters, compiled), used by `json` and `avro` per column (`avro_value`: an Avro
//!   value's binary); `numbers`: their number texts;
//!   `java_float`: Java's Float.toString (connector/events/java_float.py, ported); `dates`:
//!   datetime fields.
//! - `rowimages`: a FULL-image rows event's rows as mysql-replication's values (the Python
//!   reference: tests/reference_rowimages.py).

use pyo3::prelude::*;

mod avro;
mod avro_value;
mod convert;
mod dates;
mod java_float;
mod json;
mod numbers;
mod rowbytes;
mod rowimages;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<json::RowWriter>()?;
    m.add_class::<json::TableRecords>()?;
    m.add_class::<avro::AvroRows>()?;
    m.add_class::<avro::AvroRecords>()?;
    m.add_class::<rowimages::RowImages>()?;
    Ok(())
}
