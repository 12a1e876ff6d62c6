//! The machine and toolchain a measurement was taken on: NPS is only comparable on the same
//! machine, signatures and instruction counts only with the same toolchain. [`Provenance`]
//! stamps a comparison, a calibration run or a match with the date, host and machine, so that a
//! report drawn from its JSON later (`lab report`) names them.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// What a file or setting reads when the machine does not have it (no cpufreq, no THP).
pub(crate) const UNAVAILABLE: &str = "unavailable";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    pub cpu_model: String,
    pub cores: usize,
    /// Kernel release (`/proc/sys/kernel/osrelease`). `None`: not recorded (an older baseline).
    #[serde(default)]
    pub kernel: Option<String>,
    /// The selected transparent huge pages mode (`always`, `madvise`, `never`), which decides
    /// whether the engine's TT sits on huge pages.
    #[serde(default)]
    pub transparent_hugepages: Option<String>,
    /// cpu0's cpufreq scaling governor, or "unavailable" without cpufreq.
    #[serde(default)]
    pub governor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toolchain {
    /// `rustc -vV`, verbatim.
    pub rustc: String,
    /// RUSTFLAGS and CARGO_ENCODED_RUSTFLAGS as set when measuring.
    pub rustflags: String,
    /// Enabled `target_feature`s for that rustc and those flags.
    pub target_features: Vec<String>,
}

impl Machine {
    pub fn current() -> Self {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find(|line| line.starts_with("model name"))
                    .and_then(|line| line.split_once(':'))
                    .map(|(_, model)| model.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".to_string());
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let read = |path: &str| {
            std::fs::read_to_string(path)
                .ok()
                .map(|text| text.trim().to_string())
                .filter(|text| !text.is_empty())
        };
        Self {
            cpu_model,
            cores,
            kernel: Some(read("/proc/sys/kernel/osrelease").unwrap_or_else(|| UNAVAILABLE.into())),
            transparent_hugepages: Some(
                read("/sys/kernel/mm/transparent_hugepage/enabled")
                    .map(|modes| selected_mode(&modes))
                    .unwrap_or_else(|| UNAVAILABLE.into()),
            ),
            governor: Some(
                read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
                    .unwrap_or_else(|| UNAVAILABLE.into()),
            ),
        }
    }
}

/// `always [madvise] never` → `madvise`: the bracketed entry is the one in force.
fn selected_mode(modes: &str) -> String {
    modes
        .split_whitespace()
        .find_map(|mode| mode.strip_prefix('[')?.strip_suffix(']'))
        .unwrap_or(modes)
        .to_string()
}

/// Whether figures measured in one setting can be judged against another's.
#[derive(Debug)]
pub(crate) struct Comparability {
    /// NPS: same CPU, cores, kernel, THP mode, governor and toolchain (as far as recorded).
    pub(crate) nps: bool,
    /// Signatures and instruction counts: the same toolchain.
    pub(crate) toolchain: bool,
    /// What differs, one entry per setting: `governor: performance (baseline) vs powersave`.
    pub(crate) differences: Vec<String>,
    /// Settings the stored side did not record (older baselines): unknown, not held against it.
    pub(crate) unknown: Vec<String>,
}

/// Compares the setting a baseline was measured in (`stored`) with the current one. Settings
/// the baseline does not record are listed as unknown and do not make NPS incomparable, so old
/// baselines stay usable; every recorded difference does.
pub(crate) fn comparability(
    stored: (&Machine, &Toolchain),
    current: (&Machine, &Toolchain),
) -> Comparability {
    let (stored_machine, stored_toolchain) = stored;
    let (current_machine, current_toolchain) = current;
    let mut differences = Vec::new();
    let mut unknown = Vec::new();
    let mut compare = |name: &str, old: Option<&str>, new: Option<&str>| match (old, new) {
        (Some(old), Some(new)) if old != new => {
            differences.push(format!("{name}: {old} (baseline) vs {new}"));
        }
        (None, _) | (_, None) => unknown.push(name.to_string()),
        _ => {}
    };
    compare(
        "CPU",
        Some(&stored_machine.cpu_model),
        Some(&current_machine.cpu_model),
    );
    compare(
        "cores",
        Some(&stored_machine.cores.to_string()),
        Some(&current_machine.cores.to_string()),
    );
    compare(
        "kernel",
        stored_machine.kernel.as_deref(),
        current_machine.kernel.as_deref(),
    );
    compare(
        "transparent huge pages",
        stored_machine.transparent_hugepages.as_deref(),
        current_machine.transparent_hugepages.as_deref(),
    );
    compare(
        "CPU governor",
        stored_machine.governor.as_deref(),
        current_machine.governor.as_deref(),
    );
    compare(
        "rustc",
        Some(&one_line(&stored_toolchain.rustc)),
        Some(&one_line(&current_toolchain.rustc)),
    );
    compare(
        "RUSTFLAGS",
        Some(&stored_toolchain.rustflags),
        Some(&current_toolchain.rustflags),
    );
    compare(
        "target features",
        Some(&stored_toolchain.target_features.join(",")),
        Some(&current_toolchain.target_features.join(",")),
    );
    Comparability {
        nps: differences.is_empty(),
        toolchain: stored_toolchain == current_toolchain,
        differences,
        unknown,
    }
}

/// `rustc -vV` (version, commit, host, LLVM) on one line for a message.
fn one_line(verbose: &str) -> String {
    verbose
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

impl Toolchain {
    /// The toolchain as seen from `dir`, so a `rust-toolchain` file there takes effect.
    pub(crate) fn current(dir: &Path) -> Result<Self> {
        let rustc = rustc_version(dir)?;
        let flags = rustflags();
        let mut probe = Command::new(rustc_program());
        probe
            .current_dir(dir)
            .args(["--print", "cfg"])
            .args(flags.split_whitespace());
        let output = probe.output().context("running `rustc --print cfg`")?;
        let target_features = String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| line.strip_prefix("target_feature=\""))
            .map(|feature| feature.trim_end_matches('"').to_string())
            .collect();
        Ok(Self {
            rustc,
            rustflags: flags,
            target_features,
        })
    }
}

pub(crate) fn rustc_version(dir: &Path) -> Result<String> {
    let output = Command::new(rustc_program())
        .current_dir(dir)
        .arg("-vV")
        .output()
        .context("running `rustc -vV` (is a Rust toolchain installed?)")?;
    if !output.status.success() {
        bail!(
            "`rustc -vV` failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// Every RUSTFLAGS source cargo honours from the environment, as one comparable string.
pub(crate) fn rustflags() -> String {
    let plain = std::env::var("RUSTFLAGS").unwrap_or_default();
    let encoded = std::env::var("CARGO_ENCODED_RUSTFLAGS")
        .unwrap_or_default()
        .replace('\u{1f}', " ");
    [plain, encoded]
        .into_iter()
        .filter(|flags| !flags.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn rustc_program() -> String {
    std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string())
}

/// Where and when something was measured: the date, the host and its machine settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// Seconds since the Unix epoch when the measurement was complete.
    pub(crate) measured_unix: u64,
    /// `/proc/sys/kernel/hostname`; `None` where the system does not say.
    pub(crate) hostname: Option<String>,
    pub(crate) machine: Machine,
}

impl Provenance {
    /// This machine, now.
    pub(crate) fn here_now() -> Self {
        Self {
            measured_unix: crate::calendar::now_unix(),
            hostname: hostname(),
            machine: Machine::current(),
        }
    }
}

/// This host's name (`/proc/sys/kernel/hostname`); `None` where the system does not say.
pub(crate) fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Machine {
        Machine {
            cpu_model: "Test CPU".to_string(),
            cores: 2,
            kernel: Some("6.1.0".to_string()),
            transparent_hugepages: Some("madvise".to_string()),
            governor: Some(UNAVAILABLE.to_string()),
        }
    }

    fn toolchain() -> Toolchain {
        Toolchain {
            rustc: "rustc 1.90.0 (abc 2025-09-14)\nbinary: rustc\nhost: x86_64-unknown-linux-gnu"
                .to_string(),
            rustflags: String::new(),
            target_features: vec!["sse2".to_string()],
        }
    }

    #[test]
    fn reads_the_selected_thp_mode() {
        assert_eq!(selected_mode("always [madvise] never"), "madvise");
        assert_eq!(selected_mode("[always] madvise never"), "always");
        assert_eq!(selected_mode("odd"), "odd");
    }

    #[test]
    fn every_recorded_difference_makes_nps_incomparable() {
        let same = comparability((&machine(), &toolchain()), (&machine(), &toolchain()));
        assert!(same.nps && same.toolchain, "{same:?}");
        assert!(same.differences.is_empty() && same.unknown.is_empty());

        let mut governed = machine();
        governed.governor = Some("powersave".to_string());
        let mut thp = machine();
        thp.transparent_hugepages = Some("never".to_string());
        let mut kernel = machine();
        kernel.kernel = Some("6.12.0".to_string());
        for (other, name) in [
            (governed, "CPU governor"),
            (thp, "transparent huge pages"),
            (kernel, "kernel"),
        ] {
            let result = comparability((&machine(), &toolchain()), (&other, &toolchain()));
            assert!(!result.nps, "{name}: {result:?}");
            assert!(result.toolchain);
            assert_eq!(result.differences.len(), 1, "{result:?}");
            assert!(result.differences[0].starts_with(name), "{result:?}");
        }

        let mut newer = toolchain();
        newer.rustc = newer.rustc.replace("1.90.0", "1.91.0");
        let result = comparability((&machine(), &toolchain()), (&machine(), &newer));
        assert!(!result.nps && !result.toolchain, "{result:?}");
        assert!(result.differences[0].contains("rustc 1.90.0"), "{result:?}");
        assert!(!result.differences[0].contains('\n'), "{result:?}");
    }

    #[test]
    fn settings_an_old_baseline_lacks_are_unknown() {
        let old: Machine =
            serde_json::from_str(r#"{"cpu_model": "Test CPU", "cores": 2}"#).unwrap();
        assert_eq!(old.kernel, None);
        let result = comparability((&old, &toolchain()), (&machine(), &toolchain()));
        assert!(result.nps, "{result:?}");
        assert_eq!(
            result.unknown,
            ["kernel", "transparent huge pages", "CPU governor"]
        );
    }
}
