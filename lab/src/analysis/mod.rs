//! From raw runs to figures: measurement plans and their checks, the statistics of paired
//! timings, the comparison of two measurements with its verdict, and per-function movers.
//! Nothing here formats for a reader.

pub(crate) mod bootstrap;
pub mod compare;
pub mod functions;
pub mod measure;
pub(crate) mod stats;
