//! The eval exits of a comparison and of one revision: the share of eval calls each tier
//! ends, by material bucket and by the search that asked. The comparison and bench sections lay
//! these rows out.

use squall::tier::Tier;

use super::{no_search_split, pct, signed_pp, NO_EXITS};
use crate::analysis::compare::{Comparison, SearchSplit, SideSummary, TierRates};
use crate::digits::thousands;

/// The tiers' names in exit order, for the columns of a table header.
pub(crate) const TIER_NAMES: [&str; 3] =
    [Tier::SuperLazy.name(), Tier::Lazy.name(), Tier::Full.name()];

/// `[tier, A, B, delta]` exit shares of all eval calls; `None` unless both sides report them.
pub(crate) fn exit_rate_rows(comparison: &Comparison) -> Option<Vec<[String; 4]>> {
    let (a, b) = (
        comparison.a.eval.as_ref()?.rates.as_array(),
        comparison.b.eval.as_ref()?.rates.as_array(),
    );
    let delta = comparison.eval_deltas.as_ref()?.rates_pp.as_array();
    let rows = (0..3)
        .map(|tier| {
            [
                Tier::ALL[tier].name().to_string(),
                pct(a[tier]),
                pct(b[tier]),
                signed_pp(delta[tier]),
            ]
        })
        .collect();
    Some(rows)
}

/// `[bucket, evals A, evals B, super-lazy, lazy, full]` with each tier as `A → B (delta)`;
/// `None` unless both sides report eval exits.
pub(crate) fn bucket_rows(comparison: &Comparison) -> Option<Vec<[String; 6]>> {
    let (a, b) = (
        &comparison.a.eval.as_ref()?.by_material_bucket,
        &comparison.b.eval.as_ref()?.by_material_bucket,
    );
    let rows = a
        .iter()
        .zip(b)
        .zip(&comparison.eval_deltas.as_ref()?.by_material_bucket)
        .map(|((a, b), delta)| {
            let tier = |i: usize| {
                format!(
                    "{} → {} ({})",
                    pct(a.rates.as_array()[i]),
                    pct(b.rates.as_array()[i]),
                    signed_pp(delta.rates_pp.as_array()[i])
                )
            };
            [
                a.bucket.to_string(),
                thousands(a.total),
                thousands(b.total),
                tier(0),
                tier(1),
                tier(2),
            ]
        })
        .collect();
    Some(rows)
}

/// The header of `search_split_rows`.
pub(crate) const SEARCH_SPLIT_HEADER: [&str; 6] = [
    "tier",
    "A main",
    "A quiescence",
    "B main",
    "B quiescence",
    "quiescence B vs A",
];

/// `[tier, A main, A quiescence, B main, B quiescence, delta]`: each tier's exits split by the
/// search that asked, then all exits; `None` unless both sides report the split.
pub(crate) fn search_split_rows(comparison: &Comparison) -> Option<Vec<[String; 6]>> {
    let split = |side: &SideSummary| side.eval.as_ref()?.by_search.clone();
    let (a, b) = (split(&comparison.a)?, split(&comparison.b)?);
    let delta = comparison.eval_deltas.as_ref()?.by_search.as_ref()?;
    let tier_delta = delta.quiescence_share_of_tier_pp.as_array();
    // A tier without exits (the cheap tiers under --full-eval) has no split to show.
    let has_exits = |split: &SearchSplit, tier: usize| {
        split.main.exits.as_array()[tier] + split.quiescence.exits.as_array()[tier] > 0
    };
    let tier_shares = |split: &SearchSplit, tier: usize| {
        if !has_exits(split, tier) {
            return [NO_EXITS.to_string(), NO_EXITS.to_string()];
        }
        [
            pct(split.main.share_of_tier.as_array()[tier]),
            pct(split.quiescence.share_of_tier.as_array()[tier]),
        ]
    };
    let mut rows: Vec<[String; 6]> = (0..3)
        .map(|tier| {
            let ([a_main, a_quiescence], [b_main, b_quiescence]) =
                (tier_shares(&a, tier), tier_shares(&b, tier));
            let delta = if has_exits(&a, tier) && has_exits(&b, tier) {
                signed_pp(tier_delta[tier])
            } else {
                NO_EXITS.to_string()
            };
            [
                Tier::ALL[tier].name().to_string(),
                a_main,
                a_quiescence,
                b_main,
                b_quiescence,
                delta,
            ]
        })
        .collect();
    rows.push([
        "all".to_string(),
        pct(a.main.share_of_all),
        pct(a.quiescence.share_of_all),
        pct(b.main.share_of_all),
        pct(b.quiescence.share_of_all),
        signed_pp(delta.quiescence_share_of_all_pp),
    ]);
    Some(rows)
}

/// Said beside the eval tables when a side's bench does not split its exits by search.
pub(crate) fn search_split_missing_line(comparison: &Comparison) -> Option<String> {
    let lacks = |side: &SideSummary| side.eval.as_ref().is_none_or(|e| e.by_search.is_none());
    let who = match (lacks(&comparison.a), lacks(&comparison.b)) {
        (false, false) => return None,
        (true, false) => "A",
        (false, true) => "B",
        (true, true) => "either side",
    };
    Some(no_search_split(who))
}

/// The header of `side_search_rows`.
pub(crate) const SIDE_SEARCH_HEADER: [&str; 5] =
    ["tier", "main", "quiescence", "main %", "quiescence %"];

/// `[tier, main, quiescence, main %, quiescence %]` exits of one revision by the search that
/// asked, then all exits; `None` when its bench does not split them.
pub(crate) fn side_search_rows(side: &SideSummary) -> Option<Vec<[String; 5]>> {
    let split = side.eval.as_ref()?.by_search.as_ref()?;
    let (main, quiescence) = (
        split.main.exits.as_array(),
        split.quiescence.exits.as_array(),
    );
    let (main_share, quiescence_share) = (
        split.main.share_of_tier.as_array(),
        split.quiescence.share_of_tier.as_array(),
    );
    let mut rows: Vec<[String; 5]> = (0..3)
        .map(|tier| {
            let share = |value: f64| {
                if main[tier] + quiescence[tier] == 0 {
                    NO_EXITS.to_string()
                } else {
                    pct(value)
                }
            };
            [
                Tier::ALL[tier].name().to_string(),
                thousands(main[tier]),
                thousands(quiescence[tier]),
                share(main_share[tier]),
                share(quiescence_share[tier]),
            ]
        })
        .collect();
    rows.push([
        "all".to_string(),
        thousands(main.iter().sum()),
        thousands(quiescence.iter().sum()),
        pct(split.main.share_of_all),
        pct(split.quiescence.share_of_all),
    ]);
    Some(rows)
}

/// `[tier, share]` rows of one revision, overall then per bucket; `None` when its engine does
/// not report eval exits.
pub(crate) fn side_exit_rows(side: &SideSummary) -> Option<Vec<[String; 5]>> {
    let row = |name: String, total: u64, rates: &TierRates| {
        let r = rates.as_array();
        [name, thousands(total), pct(r[0]), pct(r[1]), pct(r[2])]
    };
    let eval = side.eval.as_ref()?;
    let mut rows = vec![row("all".to_string(), eval.calls, &eval.rates)];
    for bucket in &eval.by_material_bucket {
        rows.push(row(
            format!("bucket {}", bucket.bucket),
            bucket.total,
            &bucket.rates,
        ));
    }
    Some(rows)
}
