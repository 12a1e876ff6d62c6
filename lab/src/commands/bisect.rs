//! `lab bisect GOOD BAD --metric M`: the first commit whose metric moved beyond the threshold
//! relative to GOOD, then that commit compared with its parent.

use anyhow::{bail, Result};

use super::{plan, series_measure, settings};
use crate::analysis::compare::Thresholds;
use crate::cli::{BisectArgs, MetricArg};
use crate::exit::Exit;
use crate::history::bisect::{bisect, BisectRequest, Metric};
use crate::lab::Lab;
use crate::outcome::Outcome;
use crate::report::Report;

pub(crate) fn run(lab: &Lab, args: &BisectArgs) -> Result<Outcome> {
    if args.metric == MetricArg::Instructions && args.measure.run.no_instructions {
        bail!(
            "--metric instructions bisects by callgrind's instruction counts, which \
             --no-instructions skips: drop one of the two"
        );
    }
    let session = lab.lock()?;
    let measure = series_measure(&args.measure);
    let metric = match args.metric {
        MetricArg::Instructions => Metric::Instructions,
        MetricArg::Nps => Metric::Nps,
        MetricArg::Signature => Metric::Signature,
    };
    let thresholds = Thresholds {
        threshold_pct: match metric {
            Metric::Nps => args.threshold.unwrap_or(Thresholds::DEFAULT.threshold_pct),
            _ => Thresholds::DEFAULT.threshold_pct,
        },
        instr_threshold_pct: match metric {
            Metric::Instructions => args
                .threshold
                .unwrap_or(Thresholds::DEFAULT.instr_threshold_pct),
            _ => Thresholds::DEFAULT.instr_threshold_pct,
        },
    };
    let threshold_pct = match metric {
        Metric::Nps => thresholds.threshold_pct,
        Metric::Instructions => thresholds.instr_threshold_pct,
        Metric::Signature => 0.0,
    };
    let (compare_plan, _) = plan(&session, &measure)?;
    // Probes measure only what the metric reads: two runs (the signature check) unless NPS is
    // judged, callgrind only for instructions.
    let mut probe_plan = compare_plan.clone();
    probe_plan.instructions = metric == Metric::Instructions;
    if metric != Metric::Nps {
        probe_plan.rounds = 2;
    }
    let report = bisect(
        &session,
        &BisectRequest {
            good: &args.good,
            bad: &args.bad,
            metric,
            threshold_pct,
            probe_plan: &probe_plan,
            compare_plan: &compare_plan,
            compare_settings: settings(&measure, thresholds, None),
            features: &measure.run.features,
        },
    )?;
    Ok(Outcome {
        exit: Exit::regression_if(report.first_bad.is_some() || !report.first_bad_among.is_empty()),
        report: Report::Bisect(Box::new(report)),
    })
}
