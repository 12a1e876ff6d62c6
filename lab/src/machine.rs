//! The machine and toolchain a measurement was taken on: NPS is only comparable on the same
//! machine, signatures and instruction counts only with the same toolchain.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    pub cpu_model: String,
    pub cores: usize,
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
        Self { cpu_model, cores }
    }
}

impl Toolchain {
    /// The toolchain as seen from `dir`, so a `rust-toolchain` file there takes effect.
    pub fn current(dir: &Path) -> Result<Self> {
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

pub fn rustc_version(dir: &Path) -> Result<String> {
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
pub fn rustflags() -> String {
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
