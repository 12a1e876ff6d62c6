//! The engine under test, from a git revision to a running process: resolving the revision,
//! writing its source snapshot, building it in the cache, running its bench and running that
//! bench under callgrind.

pub mod bench;
pub mod build;
pub mod callgrind;
pub mod revision;
pub mod snapshot;
pub mod workspace;
