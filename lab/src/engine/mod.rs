//! The engine under test, from a git revision to a running process: its configuration
//! (`lab.toml`), resolving the revision, writing its source snapshot, building it in the cache
//! (cargo for squall, the configured command for an OpenBench-style engine), running its bench
//! in either format and running that bench under callgrind.

pub mod adapter;
pub mod bench;
pub mod build;
pub mod callgrind;
pub mod command_build;
pub mod config;
pub(crate) mod openbench;
pub mod revision;
pub mod snapshot;
pub(crate) mod workspace;
