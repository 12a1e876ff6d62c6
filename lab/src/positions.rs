//! Position files shared by the lab's readers: plain or gzip text read within a cap, pools
//! and `--positions` files (one FEN or EPD per line, each checked), pools written atomically,
//! and the seeded generator that orders pools, books and samples.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Result};

use crate::input::{FileCap, Problem};

/// The lab's seeded generator: the engine's SplitMix64, whose sequence does not change between
/// versions as a crate's RNG algorithm might.
pub use squall::calibrate::SplitMix;

/// A text file, decompressed when its name ends in `.gz`, read as `file_cap` allows (a regular
/// file, at most its cap before and after decompression; see [`crate::input`]).
pub(crate) fn read_text(path: &Path, file_cap: FileCap) -> Result<String> {
    let raw = crate::input::read_bytes(path, file_cap)?;
    let what = file_cap.what;
    let bytes = if is_gzip(path) {
        crate::input::read_capped(flate2::read::GzDecoder::new(&raw[..]), file_cap.cap).map_err(
            |problem| match problem {
                Problem::TooLarge => anyhow::anyhow!(
                    "{what} {} is larger than the {} cap on a {what} once decompressed",
                    path.display(),
                    crate::input::size_text(file_cap.cap)
                ),
                _ => anyhow::anyhow!(
                    "{what} {} is not valid gzip-compressed text",
                    path.display()
                ),
            },
        )?
    } else {
        raw
    };
    String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{what} {} is not UTF-8 text", path.display()))
}

fn is_gzip(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

/// Writes a new pool atomically, gzip-compressed when the name ends in `.gz`, never replacing
/// a file (`paths::write_new`). The gzip header carries no timestamp or name, so the same pool
/// gives the same bytes.
pub fn write_pool(path: &Path, text: &str) -> Result<()> {
    let bytes = if is_gzip(path) {
        let mut encoder = flate2::GzBuilder::new()
            .mtime(0)
            .write(Vec::new(), flate2::Compression::best());
        encoder.write_all(text.as_bytes())?;
        encoder.finish()?
    } else {
        text.as_bytes().to_vec()
    };
    crate::paths::write_new(path, &bytes)
}

/// Reads a pool (`.epd` or `.epd.gz`): one FEN or EPD per line, `#` comments and blank lines
/// skipped, EPD operations after `;` dropped. Every FEN is checked; a bad line is reported
/// with its number. Returns the FENs.
pub fn read_pool(path: &Path) -> Result<Vec<String>> {
    let text = read_text(path, crate::input::POOL)?;
    let mut fens = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fen = line.split(';').next().unwrap_or_default().trim();
        if let Err((_, reason)) = squall::bench::parse_positions(fen) {
            bail!("{}:{}: bad position: {reason}", path.display(), index + 1);
        }
        fens.push(fen.to_string());
    }
    if fens.is_empty() {
        bail!("pool {} has no positions", path.display());
    }
    Ok(fens)
}
