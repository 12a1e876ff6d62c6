//! Squall Lab: builds the engine of git revisions in a cache, measures them with
//! `squall bench --json` and reports signature, speed, instruction and eval-exit changes.
//!
//! The CLI (`src/main.rs`) is a thin layer over [`app::run`]; every module works without a
//! terminal, so tests drive the library or the binary alike.

pub mod app;
pub mod baseline;
pub mod build;
pub mod calibration;
pub mod cli;
pub mod compare;
pub mod engine;
pub mod functions;
pub mod games;
pub mod machine;
pub mod measure;
pub mod paths;
pub mod perf_profile;
pub mod pool;
pub mod process;
pub mod profile;
pub mod progress;
pub mod report;
pub mod revision;
pub mod run;
pub mod stats;
pub mod workspace;
