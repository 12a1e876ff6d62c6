//! Squall Lab: builds the engine of git revisions in a cache, measures them with
//! `squall bench --json` and reports signature, speed, instruction and eval-exit changes.
//!
//! The CLI (`src/main.rs`) is a thin layer over [`commands::run`]; every module works without
//! a terminal, so tests drive the library or the binary alike.

pub mod analysis;
pub mod baseline;
pub mod calendar;
pub mod calibration;
pub mod cli;
pub mod commands;
pub mod digits;
pub mod engine;
pub mod exit;
pub mod games;
pub mod history;
pub mod input;
pub mod lab;
pub mod machine;
pub mod outcome;
pub mod paths;
pub mod pool;
pub mod positions;
pub mod process;
pub mod profile;
pub mod progress;
pub mod report;
pub mod schema;
pub mod side;
pub mod tune;
pub mod verdict;
