//! Property tests of calibration files and shard merges: arbitrary input never panics on load
//! (nor in the reports and tables read from what loads), valid files round-trip through JSON,
//! and merging disjoint shards in any order gives exactly the histogram of all their samples.
//!
//! The case counts are fixed and modest (a few seconds in all with the optimised test profile);
//! `PROPTEST_CASES` overrides them for a longer hunt. Failing inputs are printed, not saved.

mod common;

use common::calibration::calibration_file;
use proptest::prelude::*;
use serde_json::Value;
use squall::calibrate::Histogram;
use squall_lab::calibration::data::{
    CalibrationFile, ExitRate, Histograms, MarginSafety, ShardProvenance, SparseHistogram, Tally,
    TierSafety, HISTOGRAM_LIMIT,
};
use squall_lab::calibration::merge::merge_shards;
use squall_lab::calibration::summary::{CalibratedSide, CalibrationComparison};
use squall_lab::calibration::tables::{self, Choice, Pair};
use squall_lab::report::calibration::{self as report, CalibrationReport};
use squall_lab::report::table::Style;
use squall_lab::report::Format;
use squall_lab::report::{render, Report};

/// Cases per run of the byte-level and mutation properties (each parses, reports and renders).
const LOAD_CASES: u32 = 300;
/// Cases per run of the round trip.
const ROUND_TRIP_CASES: u32 = 300;
/// Cases per run of the exact merge (each builds up to 5 shards of up to 27 x 200 samples).
const MERGE_CASES: u32 = 64;
/// Cases per run of the duplicate and overlap refusals (the shard count and repeated shard
/// are the only inputs that matter, 2..=5 of each).
const DUPLICATE_CASES: u32 = 16;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

const SETS: [(&str, usize); 4] = [
    ("lazy_residual", 8),
    ("super_lazy_residual", 8),
    ("king", 8),
    ("qfutility_excess", 3),
];

/// A valid file whose histograms hold `samples[set][bucket]`, over `lo..hi`; `scale` varies
/// the counters so shards differ.
fn build(
    samples: &[Vec<Vec<i32>>],
    lo: i32,
    hi: i32,
    positions: u64,
    scale: u64,
) -> CalibrationFile {
    let set = |i: usize| {
        Some(
            samples[i]
                .iter()
                .map(|values| {
                    let mut h = Histogram::new(lo, hi);
                    for &v in values {
                        h.record(v);
                    }
                    SparseHistogram::from_dense(&h)
                })
                .collect(),
        )
    };
    let tally = |b: u64| Tally {
        exits: 100 * scale + b,
        exceeded: scale + b % 3,
        positions: positions + b,
        max_from_one_position: 7 * scale + b,
    };
    let tier = || TierSafety {
        by_material_bucket: (0..8).map(tally).collect(),
        by_side_buckets: (0..8).map(|_| (0..8).map(tally).collect()).collect(),
        by_danger_class: None,
    };
    let exit_rate = ExitRate {
        calls: 300 * scale,
        exits: [100 * scale, 50 * scale, 25 * scale],
        by_material_bucket: (0..8).map(|b| [10 * scale + b, scale, b]).collect(),
    };
    CalibrationFile {
        histograms: Some(Histograms {
            lo,
            hi,
            lazy_residual: set(0),
            super_lazy_residual: set(1),
            king: set(2),
            qfutility_excess: set(3),
        }),
        margin_safety: Some(MarginSafety {
            super_lazy: tier(),
            lazy: tier(),
        }),
        ..calibration_file(
            positions,
            5,
            &["residual", "qfutility"],
            1000 * scale,
            exit_rate,
        )
    }
}

fn range() -> impl Strategy<Value = (i32, i32)> {
    (-HISTOGRAM_LIMIT..HISTOGRAM_LIMIT - 1)
        .prop_flat_map(|lo| (Just(lo), (lo + 1)..=(lo + 3000).min(HISTOGRAM_LIMIT)))
}

/// Samples per set and bucket, some beyond `lo..hi` on either side.
fn samples_in(lo: i32, hi: i32, max: usize) -> impl Strategy<Value = Vec<Vec<Vec<i32>>>> {
    let value = prop_oneof![
        8 => lo..hi,
        1 => (lo - 500)..lo,
        1 => hi..(hi + 500),
    ];
    let bucket = prop::collection::vec(value, 0..max);
    SETS.map(|(_, buckets)| prop::collection::vec(bucket.clone(), buckets..=buckets))
        .to_vec()
}

/// A valid file: random range, samples and counters.
fn valid_file() -> impl Strategy<Value = CalibrationFile> {
    range().prop_flat_map(|(lo, hi)| {
        (samples_in(lo, hi, 40), 1u64..1_000_000, 1u64..1_000_000)
            .prop_map(move |(samples, positions, scale)| build(&samples, lo, hi, positions, scale))
    })
}

/// Every node of a JSON value (leaves, lists and objects), by path, so an edit can also
/// replace a whole row or table.
fn leaves(value: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    if !path.is_empty() {
        out.push(path.clone());
    }
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                path.push(k.clone());
                leaves(v, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push(i.to_string());
                leaves(v, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(value: &'a mut Value, path: &[String]) -> &'a mut Value {
    path.iter().fold(value, |v, key| match v {
        Value::Object(map) => map.get_mut(key).unwrap(),
        Value::Array(items) => &mut items[key.parse::<usize>().unwrap()],
        _ => unreachable!(),
    })
}

/// Values that break assumptions: extremes of every integer type, negatives, floats,
/// wrong types, and lists of the wrong length.
fn hostile() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::from(u64::MAX)),
        Just(Value::from(u64::MAX / 2 + 1)),
        Just(Value::from(i64::MIN)),
        Just(Value::from(i32::MAX)),
        Just(Value::from(i32::MIN)),
        Just(Value::from(-1)),
        Just(Value::from(0)),
        Just(Value::from(1e300)),
        Just(Value::Null),
        Just(Value::from("x\n")),
        Just(Value::Array(vec![])),
        prop::collection::vec(any::<u64>(), 0..10).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
    ]
}

/// Everything a user can do with a loaded file must not panic.
fn exercise(file: &CalibrationFile) {
    let full = CalibrationReport::new(file.clone(), "prop".into(), Some([100, 200, 300]), 98.0);
    for style in [Style::Terminal, Style::Markdown] {
        let _ = report::full_report(&full, style);
        for (set, _) in SETS {
            let _ = report::percentile_section(file, set, &[0.0, 0.5, 50.0, 99.5, 100.0], style);
        }
        let side = || CalibratedSide::new("a".into(), "a.json".into(), file, Some([1, 2, 3]), 98.0);
        let both = CalibrationComparison::new(
            (file.depth, file.positions),
            side(),
            side(),
            98.0,
            "dir".into(),
        );
        let _ = report::compare_section(&both, style);
    }
    let _ = render(&Report::Calibration(Box::new(full)), Format::Json);
    let choice = Choice::uniform(
        Pair::new(5.0, 95.0, false).unwrap(),
        Pair::new(2.0, 98.0, false).unwrap(),
    );
    let _ = tables::render(file, "prop.json", &choice);
    let mut twice = file.clone();
    let _ = twice.merge(file);
}

/// Shard `index` of `count` of a pool of `pool` positions, as `lab calibrate --shard` writes it.
fn provenance(pool: u64, index: u64, count: u64) -> ShardProvenance {
    ShardProvenance {
        pool: "pool.epd".to_string(),
        pool_digest: "d1g357".to_string(),
        pool_positions: pool,
        revision: "HEAD".to_string(),
        tree: "7733".to_string(),
        shard_count: count,
        shards: vec![index],
        margins: None,
        measured: None,
    }
}

/// Deals the samples of one run into `count` shards by `owner`, and returns the shard files
/// with their provenance, plus the file of all samples together.
fn shards_of(
    samples: &[Vec<Vec<i32>>],
    owner: &[usize],
    count: usize,
    lo: i32,
    hi: i32,
) -> (Vec<CalibrationFile>, CalibrationFile) {
    let pool = 10 * count as u64 + 3;
    let mut k = 0;
    let mut dealt = vec![
        samples
            .iter()
            .map(|s| vec![Vec::new(); s.len()])
            .collect::<Vec<_>>();
        count
    ];
    for (s, set) in samples.iter().enumerate() {
        for (b, bucket) in set.iter().enumerate() {
            for &v in bucket {
                dealt[owner[k % owner.len()] % count][s][b].push(v);
                k += 1;
            }
        }
    }
    let files = dealt
        .iter()
        .enumerate()
        .map(|(i, shard)| {
            let lab = provenance(pool, i as u64 + 1, count as u64);
            let mut f = build(shard, lo, hi, lab.expected_positions().unwrap(), 1);
            f.lab = Some(lab);
            f
        })
        .collect();
    let all = build(samples, lo, hi, pool, 1);
    (files, all)
}

proptest! {
    #![proptest_config(config(LOAD_CASES))]

    #[test]
    fn arbitrary_text_never_panics_on_load(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(file) = CalibrationFile::parse(&text, "prop.json") {
            exercise(&file);
        }
        // With the header a loader checks first, so the fields are reached.
        let framed = format!(r#"{{"schema_version": 1, "kind": "squall-calibration", {text}}}"#);
        if let Ok(file) = CalibrationFile::parse(&framed, "prop.json") {
            exercise(&file);
        }
    }

    #[test]
    fn hostile_fields_never_panic(
        file in valid_file(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), hostile()), 1..4),
        range in prop::option::of((hostile(), hostile())),
    ) {
        let mut value = serde_json::to_value(&file).unwrap();
        // The histogram range is two fields among thousands: edited on its own as well.
        if let Some((lo, hi)) = range {
            value["histograms"]["lo"] = lo;
            value["histograms"]["hi"] = hi;
        }
        for (index, replacement) in edits {
            let mut paths = Vec::new();
            leaves(&value, &mut Vec::new(), &mut paths);
            if paths.is_empty() {
                break;
            }
            let path = paths[index.index(paths.len())].clone();
            *at(&mut value, &path) = replacement;
        }
        let text = serde_json::to_string(&value).unwrap();
        match CalibrationFile::parse(&text, "prop.json") {
            Ok(loaded) => exercise(&loaded),
            Err(error) => {
                let message = format!("{error:#}");
                prop_assert!(message.starts_with("prop.json: "), "{}", message);
                prop_assert_eq!(message.lines().count(), 1, "{}", message);
            }
        }
    }
}

proptest! {
    #![proptest_config(config(ROUND_TRIP_CASES))]

    #[test]
    fn valid_files_round_trip(file in valid_file(), pretty in any::<bool>()) {
        let text = if pretty {
            serde_json::to_string_pretty(&file).unwrap()
        } else {
            serde_json::to_string(&file).unwrap()
        };
        let loaded = CalibrationFile::parse(&text, "prop.json").unwrap();
        prop_assert_eq!(&loaded, &file);
        // The dense form reads back to the same sparse bins.
        for (set, _) in SETS {
            let sparse = match set {
                "lazy_residual" => &file.histograms.as_ref().unwrap().lazy_residual,
                "super_lazy_residual" => &file.histograms.as_ref().unwrap().super_lazy_residual,
                "king" => &file.histograms.as_ref().unwrap().king,
                _ => &file.histograms.as_ref().unwrap().qfutility_excess,
            };
            for (dense, sparse) in loaded.histogram_set(set).unwrap().iter().zip(sparse.as_ref().unwrap()) {
                prop_assert_eq!(&SparseHistogram::from_dense(dense), sparse);
            }
        }
    }
}

proptest! {
    #![proptest_config(config(MERGE_CASES))]

    #[test]
    fn disjoint_shards_merge_exactly_in_any_order(
        (lo, hi, samples) in range().prop_flat_map(|(lo, hi)| (Just(lo), Just(hi), samples_in(lo, hi, 200))),
        count in 2usize..=5,
        owner in prop::collection::vec(0usize..5, 1..64),
        order in Just((0..5).collect::<Vec<usize>>()).prop_shuffle(),
    ) {
        let (shards, all) = shards_of(&samples, &owner, count, lo, hi);
        let named = |indices: &mut dyn Iterator<Item = usize>| -> Vec<(String, CalibrationFile)> {
            indices.map(|i| (format!("shard-{}.json", i + 1), shards[i].clone())).collect()
        };
        let straight = merge_shards(&named(&mut (0..count))).unwrap();
        let shuffled = merge_shards(&named(&mut order.iter().copied().filter(|&i| i < count))).unwrap();
        prop_assert_eq!(&straight, &shuffled);
        // Exact against one histogram of every sample: every bin and both tails, so every
        // percentile; and the whole pool is recorded as one shard.
        for (set, _) in SETS {
            prop_assert_eq!(straight.histogram_set(set), all.histogram_set(set), "{}", set);
        }
        prop_assert_eq!(straight.histograms, all.histograms);
        prop_assert_eq!(straight.positions, all.positions);
        let lab = straight.lab.unwrap();
        prop_assert_eq!((lab.shard_count, lab.shards), (1, vec![1]));
        // Counters are sums.
        prop_assert_eq!(straight.nodes, 1000 * count as u64);
        prop_assert_eq!(straight.exit_rate.calls, 300 * count as u64);
    }
}

proptest! {
    #![proptest_config(config(DUPLICATE_CASES))]

    #[test]
    fn a_shard_given_twice_or_overlapping_is_refused(
        count in 2usize..=5,
        repeat in 0usize..5,
        owner in prop::collection::vec(0usize..5, 1..16),
    ) {
        let samples: Vec<Vec<Vec<i32>>> = SETS.iter().map(|(_, b)| vec![vec![1, 2, 3]; *b]).collect();
        let (shards, _) = shards_of(&samples, &owner, count, -1500, 1500);
        let repeat = repeat % count;
        let mut files: Vec<(String, CalibrationFile)> =
            shards.iter().enumerate().map(|(i, f)| (format!("s{i}"), f.clone())).collect();
        // The same shard again, identical or re-run (different counters, same positions).
        files.push(("again".to_string(), shards[repeat].clone()));
        let error = format!("{:#}", merge_shards(&files).unwrap_err());
        prop_assert!(error.contains("identical contents"), "{}", error);
        files.last_mut().unwrap().1.nodes += 1;
        let error = format!("{:#}", merge_shards(&files).unwrap_err());
        prop_assert!(error.contains(&format!("both cover shard {}/{count}", repeat + 1)), "{}", error);
    }
}
