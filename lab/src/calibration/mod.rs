//! Calibration of the lazy-exit margins: the calibration file and its exact merge, running
//! the engine's samplers over a pool in parallel processes, what a calibration recommends
//! (futility margins, stale warnings), and margin-table generation. `report::calibration`
//! formats it.

pub mod calibrate;
pub mod data;
pub mod figures;
pub mod in_force;
pub mod margins_source;
pub mod run;
pub mod summary;
pub mod tables;

pub use data::CalibrationFile;
