//! A calibration file as `squall calibrate` writes it, for tests that build one by hand.

use squall_lab::calibration::data::{CalibrationFile, ExitRate};
use squall_lab::engine::bench::EngineIdentity;

/// A file of `positions` positions searched to `depth` with `modes`, its exits `exit_rate`; no
/// histograms, margin safety, samples or provenance (set them with struct update syntax).
pub fn calibration_file(
    positions: u64,
    depth: i32,
    modes: &[&str],
    nodes: u64,
    exit_rate: ExitRate,
) -> CalibrationFile {
    CalibrationFile {
        schema_version: 1,
        kind: "squall-calibration".to_string(),
        engine: EngineIdentity {
            name: "squall".to_string(),
            version: "0.1.0".to_string(),
            features: vec!["calibrate".to_string()],
        },
        depth,
        hash_mb: 16,
        positions,
        modes: modes.iter().map(|m| m.to_string()).collect(),
        nodes,
        exit_rate,
        histograms: None,
        margin_safety: None,
        samples: None,
        lab: None,
    }
}
