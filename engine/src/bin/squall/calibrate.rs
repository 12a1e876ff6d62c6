//! `squall calibrate MODE... --positions FILE`: real searches over a position pool with the
//! calibration sampler on. Modes: `residual`, `marginsafety`, `qfutility`, `samples` (need the
//! `calibrate` feature) and `exitrate` (always available). One run can take several modes.

use crate::args::{once, parse_count, read_positions, MAX_HASH_MB, MAX_SEARCH_DEPTH};
use crate::bench_output::engine_json;
use crate::json::Json;
use crate::output::{errln, out, outln};
use squall::bench;
use squall::calibrate::{passes, run_pool, stats, Modes, PoolRun, Sampling};
use squall::tier::TIERS;
use std::io::Write;

pub const USAGE: &str = "usage: squall calibrate MODE... --positions FILE [--depth N] [--hash MB] \
[--out FILE.json] [--json] [--percentile P] [--samples-per-bucket N] [--seed S]  \
(MODE: residual, marginsafety, exitrate, qfutility, samples)";

pub const SCHEMA_VERSION: u64 = 1;
const DEFAULT_DEPTH: i32 = 6;
const DEFAULT_PERCENTILE: f64 = 98.0;
const SPREAD: [f64; 7] = [2.0, 5.0, 10.0, 50.0, 90.0, 95.0, 98.0];
/// The largest `--samples-per-bucket`: 8 buckets of it stay within a few hundred MB.
const MAX_SAMPLES_PER_BUCKET: u64 = 10_000_000;

struct Options {
    modes: Modes,
    exit_rate: bool,
    positions_file: String,
    depth: i32,
    hash_mb: usize,
    out: Option<String>,
    json: bool,
    #[cfg_attr(not(feature = "calibrate"), allow(dead_code))]
    percentile: f64,
}

/// `--percentile`: a plain decimal 0..=100 (no sign, exponent, `inf` or `NaN`).
fn parse_percentile(text: &str) -> Result<f64, String> {
    let plain = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && text.bytes().filter(|&b| b == b'.').count() <= 1
        && text.bytes().any(|b| b.is_ascii_digit());
    text.parse::<f64>()
        .ok()
        .filter(|p| plain && (0.0..=100.0).contains(p))
        .ok_or(format!(
            "bad --percentile `{text}`: expected a plain number 0..=100"
        ))
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut modes = Modes::default();
    let mut exit_rate = false;
    let mut positions_file = None;
    let mut depth = DEFAULT_DEPTH;
    let mut hash_mb = bench::DEFAULT_HASH_MB;
    let mut out = None;
    let mut json = false;
    let mut percentile = DEFAULT_PERCENTILE;
    let mut samples = false;
    let mut sampling = Sampling::default();
    let mut seen = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().cloned().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "residual" => modes.residual = true,
            "marginsafety" => modes.margin_safety = true,
            "qfutility" => modes.qfutility = true,
            "exitrate" => exit_rate = true,
            "samples" => samples = true,
            "--positions" => {
                once(&mut seen, "--positions")?;
                positions_file = Some(value("--positions")?);
            }
            "--depth" => {
                once(&mut seen, "--depth")?;
                let text = value("--depth")?;
                depth = parse_count("--depth", &text, 1, MAX_SEARCH_DEPTH)? as i32;
            }
            "--hash" => {
                once(&mut seen, "--hash")?;
                let text = value("--hash")?;
                hash_mb = parse_count("--hash", &text, 1, MAX_HASH_MB as u64)? as usize;
            }
            "--out" => {
                once(&mut seen, "--out")?;
                out = Some(value("--out")?);
            }
            "--json" => json = true,
            "--percentile" => {
                once(&mut seen, "--percentile")?;
                let text = value("--percentile")?;
                percentile = parse_percentile(&text)?;
            }
            "--samples-per-bucket" => {
                once(&mut seen, "--samples-per-bucket")?;
                let text = value("--samples-per-bucket")?;
                sampling.per_bucket =
                    parse_count("--samples-per-bucket", &text, 1, MAX_SAMPLES_PER_BUCKET)? as usize;
            }
            "--seed" => {
                once(&mut seen, "--seed")?;
                let text = value("--seed")?;
                sampling.seed = parse_count("--seed", &text, 0, u64::MAX)?;
            }
            other => return Err(format!("unknown calibrate argument `{other}`; {USAGE}")),
        }
    }
    if !samples && (seen.contains(&"--samples-per-bucket") || seen.contains(&"--seed")) {
        return Err(format!(
            "--samples-per-bucket and --seed are settings of the samples mode; {USAGE}"
        ));
    }
    modes.samples = samples.then_some(sampling);
    if modes == Modes::default() && !exit_rate {
        return Err(format!("calibrate needs at least one MODE; {USAGE}"));
    }
    let positions_file =
        positions_file.ok_or(format!("calibrate needs --positions FILE; {USAGE}"))?;
    Ok(Options {
        modes,
        exit_rate,
        positions_file,
        depth,
        hash_mb,
        out,
        json,
        percentile,
    })
}

pub fn command(args: &[String]) -> Result<(), String> {
    let options = parse(args)?;
    squall::calibrate::supported(options.modes)?;
    let positions = read_positions(&options.positions_file)?;
    let total = positions.len();
    let step = (total / 20).max(1);
    let passes = passes(options.modes);
    let run = run_pool(
        &positions,
        options.depth,
        options.hash_mb,
        options.modes,
        |pass, index| {
            if (index + 1) % step == 0 || index + 1 == total {
                if passes == 1 {
                    errln!("calibrate: {}/{total} positions", index + 1);
                } else {
                    let what = if pass == 0 { "real tree" } else { "qfutility" };
                    errln!(
                        "calibrate: {}/{total} positions (pass {}/{passes}: {what})",
                        index + 1,
                        pass + 1
                    );
                }
            }
        },
    )?;
    let json = to_json(&options, &run);
    if let Some(out) = &options.out {
        write_atomically(out, &json.to_text())?;
    }
    if options.json {
        out!("{}", json.to_text());
    } else {
        print_text(&options, &run);
    }
    Ok(())
}

/// Writes to a temporary file beside `path`, then renames: a reader never sees half a file.
fn write_atomically(path: &str, contents: &str) -> Result<(), String> {
    let temp = format!("{path}.tmp{}", std::process::id());
    let result = std::fs::File::create(&temp)
        .and_then(|mut f| f.write_all(contents.as_bytes()).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&temp, path));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        format!("{path}: {e}")
    })
}

fn tiers(values: &[u64; TIERS]) -> Json {
    Json::Array(values.iter().map(|&n| Json::UInt(n)).collect())
}

fn to_json(options: &Options, run: &PoolRun) -> Json {
    let mut modes = Vec::new();
    for (on, name) in [
        (options.modes.residual, "residual"),
        (options.modes.margin_safety, "marginsafety"),
        (options.modes.qfutility, "qfutility"),
        (options.exit_rate, "exitrate"),
        (options.modes.samples.is_some(), "samples"),
    ] {
        if on {
            modes.push(Json::Str(name.to_string()));
        }
    }
    let mut fields = vec![
        ("schema_version", Json::UInt(SCHEMA_VERSION)),
        ("kind", Json::Str("squall-calibration".to_string())),
        ("engine", engine_json()),
        ("depth", Json::Int(options.depth as i64)),
        ("hash_mb", Json::UInt(options.hash_mb as u64)),
        ("positions", Json::UInt(run.positions)),
        ("modes", Json::Array(modes)),
        ("nodes", Json::UInt(run.counters.nodes)),
        (
            "exit_rate",
            Json::Object(vec![
                ("calls", Json::UInt(run.counters.eval_calls)),
                ("exits", tiers(&run.counters.exits)),
                (
                    "by_material_bucket",
                    Json::Array(
                        run.counters
                            .exits_by_material_bucket
                            .iter()
                            .map(tiers)
                            .collect(),
                    ),
                ),
            ]),
        ),
    ];
    #[cfg(feature = "calibrate")]
    if let Some(calibration) = &run.calibration {
        sampled::add_json(&mut fields, calibration);
    }
    let _ = &mut fields;
    Json::Object(fields)
}

fn print_text(options: &Options, run: &PoolRun) {
    outln!(
        "calibration: {} positions, depth {}, {} nodes",
        run.positions,
        options.depth,
        run.counters.nodes
    );
    #[cfg(feature = "calibrate")]
    if let Some(calibration) = &run.calibration {
        sampled::print_text(options.percentile, calibration);
    }
    if options.exit_rate || options.modes.margin_safety {
        outln!("\nExit rate by material bucket (% of eval calls): super-lazy / lazy / full");
        for (bucket, exits) in run.counters.exits_by_material_bucket.iter().enumerate() {
            let total: u64 = exits.iter().sum();
            let pct = |n: u64| {
                if total == 0 {
                    0.0
                } else {
                    100.0 * n as f64 / total as f64
                }
            };
            outln!(
                "  bucket {bucket}: {:5.1}% {:5.1}% {:5.1}%   ({total} calls)",
                pct(exits[0]),
                pct(exits[1]),
                pct(exits[2])
            );
        }
        let [sl, lazy, full] = run.counters.exit_percentages();
        outln!(
            "  all     : {sl:5.1}% {lazy:5.1}% {full:5.1}%   ({} calls)",
            run.counters.eval_calls
        );
    }
    let _ = (stats::Z95, SPREAD);
}

#[cfg(feature = "calibrate")]
mod sampled {
    use super::{Json, SPREAD};
    use crate::output::outln;
    use squall::calibrate::{stats, Calibration, ExitTally, Histogram, Sample, Samples};
    use squall::eval::margins::FUTILITY_BASE_MARGIN_BY_SOURCE;
    use squall::tier::{Tier, SIDE_BUCKETS};

    fn histogram(h: &Histogram) -> Json {
        let bins = h
            .bins
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| Json::Array(vec![Json::Int((h.lo + i as i32) as i64), Json::UInt(n)]))
            .collect();
        Json::Object(vec![
            ("underflow", Json::UInt(h.underflow)),
            ("overflow", Json::UInt(h.overflow)),
            ("bins", Json::Array(bins)),
        ])
    }

    fn histograms(hs: &[Histogram]) -> Json {
        Json::Array(hs.iter().map(histogram).collect())
    }

    fn tally(t: &ExitTally, detailed: bool) -> Json {
        let mut fields = vec![
            ("exits", Json::UInt(t.exits)),
            ("exceeded", Json::UInt(t.exceeded)),
        ];
        if detailed {
            fields.push(("positions", Json::UInt(t.positions)));
            fields.push(("max_from_one_position", Json::UInt(t.max_from_one_position)));
        }
        Json::Object(fields)
    }

    /// One sample as a compact array: position, search, my bucket, opponent's bucket, alpha,
    /// beta, super-lazy, lazy and full scores, race, my king's and the opponent's danger class
    /// (docs/calibration.md).
    fn sample(s: &Sample) -> Json {
        let int = |v: i32| Json::Int(i64::from(v));
        Json::Array(vec![
            Json::UInt(u64::from(s.position)),
            Json::UInt(s.search as u64),
            Json::UInt(u64::from(s.my_bucket)),
            Json::UInt(u64::from(s.opp_bucket)),
            int(s.alpha),
            int(s.beta),
            int(s.super_lazy),
            int(s.lazy),
            int(s.full),
            Json::UInt(u64::from(s.race)),
            Json::UInt(u64::from(s.my_class)),
            Json::UInt(u64::from(s.opp_class)),
        ])
    }

    fn samples(samples: &Samples) -> Json {
        let reservoirs = &samples.by_material_bucket;
        Json::Object(vec![
            ("capacity", Json::UInt(samples.sampling.per_bucket as u64)),
            ("seed", Json::UInt(samples.sampling.seed)),
            (
                "seen",
                Json::Array(reservoirs.iter().map(|r| Json::UInt(r.seen())).collect()),
            ),
            (
                "by_material_bucket",
                Json::Array(
                    reservoirs
                        .iter()
                        .map(|r| Json::Array(r.items().iter().map(sample).collect()))
                        .collect(),
                ),
            ),
        ])
    }

    pub fn add_json(fields: &mut Vec<(&'static str, Json)>, c: &Calibration) {
        let first = c.lazy_residual.first().map_or(0, |h| h.lo);
        let last = c
            .lazy_residual
            .first()
            .map_or(0, |h| h.lo + h.bins.len() as i32);
        let mut hist_fields = vec![
            ("lo", Json::Int(first as i64)),
            ("hi", Json::Int(last as i64)),
        ];
        if c.modes.residual {
            hist_fields.push(("lazy_residual", histograms(&c.lazy_residual)));
            hist_fields.push(("super_lazy_residual", histograms(&c.super_lazy_residual)));
            hist_fields.push(("king", histograms(&c.king)));
        }
        if c.modes.qfutility {
            hist_fields.push(("qfutility_excess", histograms(&c.qfutility_excess)));
        }
        fields.push(("histograms", Json::Object(hist_fields)));
        if c.modes.margin_safety {
            let tier = |t: usize| {
                Json::Object(vec![
                    (
                        "by_material_bucket",
                        Json::Array(
                            c.by_material_bucket[t]
                                .iter()
                                .map(|x| tally(x, true))
                                .collect(),
                        ),
                    ),
                    (
                        "by_side_buckets",
                        Json::Array(
                            c.by_side_buckets[t]
                                .iter()
                                .map(|row| {
                                    Json::Array(row.iter().map(|x| tally(x, false)).collect())
                                })
                                .collect(),
                        ),
                    ),
                    (
                        "by_danger_class",
                        Json::Array(
                            c.by_danger_class[t]
                                .iter()
                                .map(|row| {
                                    Json::Array(row.iter().map(|x| tally(x, false)).collect())
                                })
                                .collect(),
                        ),
                    ),
                ])
            };
            fields.push((
                "margin_safety",
                Json::Object(vec![("super_lazy", tier(0)), ("lazy", tier(1))]),
            ));
        }
        if let Some(s) = &c.samples {
            fields.push(("samples", samples(s)));
        }
    }

    fn print_percentiles(title: &str, hs: &[Histogram]) {
        outln!("\n{title} (cp), by per-side bucket:");
        let header: Vec<String> = SPREAD.iter().map(|p| format!("p{p}")).collect();
        outln!(
            "  bucket {:>9} {}",
            "samples",
            header.iter().map(|h| format!("{h:>6}")).collect::<String>()
        );
        for (bucket, h) in hs.iter().enumerate() {
            let cells: String = SPREAD
                .iter()
                .map(|&p| {
                    h.percentile(p)
                        .map_or("     -".to_string(), |v| format!("{v:>6}"))
                })
                .collect();
            outln!("  {bucket:>6} {:>9} {cells}", h.count());
        }
    }

    pub fn print_text(percentile: f64, c: &Calibration) {
        if c.modes.residual {
            print_percentiles(
                "Lazy residual (full - lazy, without king)",
                &c.lazy_residual,
            );
            print_percentiles(
                "Super-lazy residual (full - material, without king)",
                &c.super_lazy_residual,
            );
            for (class, king) in c.king.chunks(SIDE_BUCKETS).enumerate() {
                print_percentiles(
                    &format!("King term, danger class {class}, by attacker's bucket"),
                    king,
                );
            }
        }
        if c.modes.margin_safety {
            for (t, name) in [(0, "Super-lazy"), (1, "Lazy")] {
                outln!(
                    "\n{name} margin safety by material bucket: exceeded / exits, Wilson 95% CI"
                );
                for (bucket, x) in c.by_material_bucket[t].iter().enumerate() {
                    let (lo, hi) = stats::wilson_interval(x.exceeded, x.exits, stats::Z95);
                    let rate = if x.exits == 0 {
                        0.0
                    } else {
                        100.0 * x.exceeded as f64 / x.exits as f64
                    };
                    let share = if x.exits == 0 {
                        0.0
                    } else {
                        100.0 * x.max_from_one_position as f64 / x.exits as f64
                    };
                    outln!(
                        "  bucket {bucket}: {:>8} / {:>10} = {rate:6.3}%  [{:.3}%, {:.3}%]  positions {:>6}  largest share {share:5.1}%",
                        x.exceeded,
                        x.exits,
                        100.0 * lo,
                        100.0 * hi,
                        x.positions
                    );
                }
            }
        }
        if let Some(samples) = &c.samples {
            outln!(
                "\nReplay samples by material bucket (capacity {}, seed {}): kept / calls",
                samples.sampling.per_bucket,
                samples.sampling.seed
            );
            for (bucket, r) in samples.by_material_bucket.iter().enumerate() {
                outln!(
                    "  bucket {bucket}: {:>9} / {:>10}",
                    r.items().len(),
                    r.seen()
                );
            }
        }
        if c.modes.qfutility {
            outln!("\nQSearch futility: real score - (stand pat + capture + positional), by source tier");
            for tier in Tier::ALL {
                let (t, name) = (tier as usize, tier.name());
                let h = &c.qfutility_excess[t];
                let recommended = h.percentile(percentile);
                outln!(
                    "  {name:>10}: {:>9} samples, p{percentile} = {}  (current FUTILITY_BASE_MARGIN_BY_SOURCE {})",
                    h.count(),
                    recommended.map_or("-".to_string(), |v| v.to_string()),
                    FUTILITY_BASE_MARGIN_BY_SOURCE[t]
                );
            }
        }
    }
}
