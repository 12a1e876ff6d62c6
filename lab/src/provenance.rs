//! Where and when a comparison was measured: the date, the host and its machine settings,
//! recorded in the JSON so that a report drawn from it later (`lab report`) names them.

use serde::{Deserialize, Serialize};

use crate::machine::Machine;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// Seconds since the Unix epoch when the comparison was complete.
    pub measured_unix: u64,
    /// `/proc/sys/kernel/hostname`; `None` where the system does not say.
    pub hostname: Option<String>,
    pub machine: Machine,
}

impl Provenance {
    /// This machine, now.
    pub fn here_now() -> Self {
        let measured_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|name| name.trim().to_string())
            .filter(|name| !name.is_empty());
        Self {
            measured_unix,
            hostname,
            machine: Machine::current(),
        }
    }
}
