//! Dates, datetimes and deltas read through CPython's datetime C API, and the day count
//! the temporal conversions (convert.rs) start from.

use pyo3::prelude::*;
use pyo3::types::{
    PyDate, PyDateAccess, PyDateTime, PyDelta, PyDeltaAccess, PyTimeAccess, PyTzInfoAccess,
};

/// A date's (or a datetime's) year, month and day.
pub fn ymd(v: &Bound<'_, PyAny>) -> PyResult<(i64, i64, i64)> {
    let d = v.downcast::<PyDate>()?;
    Ok((d.get_year() as i64, d.get_month() as i64, d.get_day() as i64))
}

/// A timedelta in microseconds (negative ones too: days carry the sign).
pub fn delta_micros(v: &Bound<'_, PyAny>) -> PyResult<i128> {
    let d = v.downcast::<PyDelta>()?;
    Ok((d.get_days() as i128 * 86_400 + d.get_seconds() as i128) * 1_000_000
       + d.get_microseconds() as i128)
}

/// A datetime's fields, read by the datetime C API's accessors (not in the limited API:
/// the module is built for one CPython, see Cargo.toml).
pub struct DateTime {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub micro: i64,
    pub aware: bool,
}

impl DateTime {
    pub fn read(v: &Bound<'_, PyAny>) -> PyResult<Self> {
        let d = v.downcast::<PyDateTime>()?;
        Ok(DateTime { year: d.get_year() as i64, month: d.get_month() as i64,
                      day: d.get_day() as i64, hour: d.get_hour() as i64,
                      minute: d.get_minute() as i64, second: d.get_second() as i64,
                      micro: d.get_microsecond() as i64, aware: d.get_tzinfo().is_some() })
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}
