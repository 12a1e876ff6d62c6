//! `squall profile`: the standard bench under pprof's sampling profiler, written as a flamegraph
//! SVG and, optionally, as folded stacks (`frame;frame;...;leaf COUNT`, one line per stack).
//!
//! Only built with `--features profile`; without it the command explains how to get it. Build
//! with `RUSTFLAGS="-C force-frame-pointers=yes"` for complete stacks (the lab's `lab profile`
//! does). The eval tiers (`super_lazy_score`, `lazy_terms`, `full_tier`) and the fixed-cost
//! checks (`drawish_scale`, `pawn_race_possible`, `bare_king_either_side`) are `#[inline(never)]`,
//! so each is a frame.

pub const USAGE: &str =
    "usage: squall profile [--depth N] [--out FILE.svg] [--frequency HZ] [--folded FILE]";

/// Options of `squall profile`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileOptions {
    pub depth: i32,
    pub out: String,
    pub frequency: i32,
    pub folded: Option<String>,
}

/// Samples per second without `--frequency`: odd, so it does not beat with periodic work.
pub const DEFAULT_FREQUENCY: i32 = 997;
/// Bench depth without `--depth`: the bench's own default.
pub const DEFAULT_DEPTH: i32 = squall::bench::DEFAULT_DEPTH;

pub fn parse_options(args: &[String]) -> Result<ProfileOptions, String> {
    let mut options = ProfileOptions {
        depth: DEFAULT_DEPTH,
        out: "flamegraph.svg".to_string(),
        frequency: DEFAULT_FREQUENCY,
        folded: None,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .map(String::as_str)
                .ok_or(format!("{name} needs a value; {USAGE}"))
        };
        let positive = |name: &str, text: &str, max: i32| {
            crate::args::parse_count(name, text, 1, max as u64).map(|n| n as i32)
        };
        match arg.as_str() {
            "--depth" => options.depth = positive("--depth", value("--depth")?, 64)?,
            "--frequency" => {
                options.frequency = positive("--frequency", value("--frequency")?, 100_000)?
            }
            "--out" => options.out = value("--out")?.to_string(),
            "--folded" => options.folded = Some(value("--folded")?.to_string()),
            other => return Err(format!("unknown profile option `{other}`; {USAGE}")),
        }
    }
    Ok(options)
}

#[cfg(not(feature = "profile"))]
pub fn command(args: &[String]) -> Result<(), String> {
    parse_options(args)?;
    Err("this squall was built without the `profile` feature; rebuild with \
         `RUSTFLAGS=\"-C force-frame-pointers=yes\" cargo build --release -p squall --features profile` \
         or use `lab profile REV`"
        .to_string())
}

#[cfg(feature = "profile")]
pub fn command(args: &[String]) -> Result<(), String> {
    use crate::output::outln;
    use squall::bench;
    use std::fmt::Write as _;
    use std::fs::File;
    use std::io::{BufWriter, Write};
    use std::time::Instant;

    let options = parse_options(args)?;
    let positions = bench::default_positions();
    // Create the outputs first: a bad path fails before a long run, not after it.
    let svg = File::create(&options.out).map_err(|e| format!("{}: {e}", options.out))?;
    let folded = match &options.folded {
        Some(path) => Some((
            path,
            File::create(path).map_err(|e| format!("{path}: {e}"))?,
        )),
        None => None,
    };
    let start = Instant::now();
    let guard = pprof::ProfilerGuardBuilder::default()
        .frequency(options.frequency)
        // Unwinding inside these from a signal handler can deadlock (pprof's advice).
        .blocklist(&["libc", "libgcc", "pthread", "vdso"])
        .build()
        .map_err(|e| format!("starting the profiler: {e}"))?;
    let result = bench::run(
        &positions,
        options.depth,
        bench::DEFAULT_HASH_MB,
        false,
        |_, _| {},
    );
    let report = guard
        .report()
        .build()
        .map_err(|e| format!("building the profile: {e}"))?;
    drop(guard);
    let elapsed = start.elapsed();

    let samples: isize = report.data.values().sum();
    report
        .flamegraph(BufWriter::new(svg))
        .map_err(|e| format!("writing {}: {e}", options.out))?;
    if let Some((path, file)) = folded {
        let mut out = BufWriter::new(file);
        for (frames, count) in &report.data {
            let mut line = frames.thread_name_or_id();
            for frame in frames.frames.iter().rev() {
                for symbol in frame.iter().rev() {
                    let _ = write!(line, ";{symbol}");
                }
            }
            writeln!(out, "{line} {count}").map_err(|e| format!("writing {path}: {e}"))?;
        }
        out.flush().map_err(|e| format!("writing {path}: {e}"))?;
    }
    outln!("Depth: {}", options.depth);
    outln!("Nodes searched: {}", result.totals.nodes);
    outln!("Search time: {} ms", result.time_ns / 1_000_000);
    outln!("Profile time: {} ms", elapsed.as_millis());
    outln!("Samples: {samples} at {} Hz", options.frequency);
    outln!("Flamegraph: {}", options.out);
    if let Some(path) = &options.folded {
        outln!("Folded stacks: {path}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_options() {
        let options = parse_options(&strings(&[
            "--depth",
            "3",
            "--out",
            "x.svg",
            "--frequency",
            "500",
            "--folded",
            "x.folded",
        ]))
        .unwrap();
        assert_eq!(options.depth, 3);
        assert_eq!(options.out, "x.svg");
        assert_eq!(options.frequency, 500);
        assert_eq!(options.folded.as_deref(), Some("x.folded"));
        assert!(parse_options(&strings(&["--depth", "0"])).is_err());
        assert!(parse_options(&strings(&["--bogus"])).is_err());
        assert!(parse_options(&strings(&["--out"])).is_err());
    }
}
