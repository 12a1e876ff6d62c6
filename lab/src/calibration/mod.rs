//! Calibration of the lazy-exit margins: the calibration file and its exact merge, running
//! the engine's samplers over a pool in parallel processes, reports (percentiles, margin
//! safety with Wilson intervals, exit rates, futility recommendations), and margin-table
//! generation.

pub mod calibrate;
pub mod data;
pub mod report;
pub mod run;
pub mod tables;

pub use data::CalibrationFile;
