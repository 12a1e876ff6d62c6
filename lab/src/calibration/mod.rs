//! Calibration of the lazy-exit margins: the calibration file and its exact merge, running
//! the engine's samplers over a pool in parallel processes, what a calibration recommends
//! (futility margins, stale warnings), and margin-table generation. `report::calibration`
//! formats it.

pub(crate) mod calibrate;
pub mod data;
pub(crate) mod figures;
pub(crate) mod in_force;
pub(crate) mod json_rows;
pub mod margins_source;
pub mod merge;
pub(crate) mod run;
pub mod summary;
pub mod tables;

pub(crate) use data::CalibrationFile;
