//! Reading criterion's own result files, shared by the timing benches that print a summary.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Directory where criterion writes its results, found the way criterion 0.5 finds it.
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("criterion")
}

/// Criterion's median time in ns for one benchmark, if it was written by this process
/// (`since` = process start), so a stale file from an earlier run is never read.
pub fn criterion_median_ns(group: &str, id: &str, since: SystemTime) -> Option<f64> {
    // Criterion replaces '/' in group names by '_' in directory names.
    let path = criterion_dir()
        .join(group.replace('/', "_"))
        .join(id)
        .join("new/estimates.json");
    if std::fs::metadata(&path).ok()?.modified().ok()? < since {
        return None;
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    json["median"]["point_estimate"].as_f64()
}
