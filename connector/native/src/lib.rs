//! gtidmark's compiled module: the per-row work of the hot path, called once per batch.
//!
//! The Python side decides everything per table once; these modules only run per row.
//! - `json`: Debezium's JSON-with-schema change records, byte for byte as Kafka Connect's
//!   JsonConverter (the Python reference: tests/reference_encoder.py).
//! - `rowimages`: a FULL-image rows event's rows as mysql-replication's values (the Python
//!   reference: tests/reference_rowimages.py).

use pyo3::prelude::*;

mod json;
mod rowbytes;
mod rowimages;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<json::RowWriter>()?;
    m.add_class::<json::TableRecords>()?;
    m.add_class::<rowimages::RowImages>()?;
    Ok(())
}
