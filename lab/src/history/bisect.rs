//! `lab bisect GOOD BAD`: the first commit on BAD's first-parent line after GOOD whose metric
//! moved beyond a threshold relative to GOOD, found by binary search. Each commit is built and
//! measured at most once per run; the commit found is then compared with its parent as
//! `lab compare` does.

use std::collections::{BTreeSet, HashMap};

use anyhow::{bail, Result};
use git2::Oid;
use serde::Serialize;

use super::range::{self, CommitInfo};
use super::revision_of;
use crate::analysis::compare::{compare, percent_change, Comparison, Criteria, Settings};
use crate::analysis::measure::{measure_pair, measure_single, Measured, Plan, Side, Subject};
use crate::analysis::stats::Verdict;
use crate::engine::build::EngineBinary;
use crate::engine::callgrind::find_valgrind;
use crate::engine::revision::Revision;
use crate::lab::Session;
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};

/// What moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Instructions per node up by the threshold or more (callgrind).
    Instructions,
    /// Paired time per node significantly slower by more than the threshold (ABBA rounds).
    Nps,
    /// The bench node count differs.
    Signature,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::Instructions => "instructions",
            Metric::Nps => "nps",
            Metric::Signature => "signature",
        }
    }
}

pub struct BisectRequest<'a> {
    pub good: &'a str,
    pub bad: &'a str,
    pub metric: Metric,
    /// Percent; ignored for the signature.
    pub threshold_pct: f64,
    /// How the probes measure (built for the metric: the fewest runs it needs).
    pub probe_plan: &'a Plan,
    /// How the commit found is compared with its parent.
    pub compare_plan: &'a Plan,
    /// The thresholds and settings of that comparison.
    pub compare_settings: Settings,
    pub features: &'a [String],
}

/// The role of a measured commit in the search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// GOOD, the reference every other commit is judged against.
    Reference,
    /// BAD, measured first: is there anything to find?
    Bad,
    /// A step of the binary search.
    Probe,
}

/// One measured commit and how it was judged against GOOD.
#[derive(Debug, Clone, Serialize)]
pub struct Probe {
    pub role: Role,
    pub commit: CommitInfo,
    /// Position on the path from GOOD (0) to BAD (the path's length).
    pub position: usize,
    /// The metric's figure: nodes, instructions per node, or B/GOOD time per node.
    pub value: Option<f64>,
    /// The change from GOOD in percent (for nps: the paired NPS change, negative is slower).
    pub change_pct: Option<f64>,
    /// For nps: the 95% interval of the time-per-node ratio to GOOD.
    pub ci: Option<[f64; 2]>,
    /// Beyond the threshold: this commit is bad.
    pub beyond: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct BisectReport {
    pub schema_version: u32,
    pub kind: Kind,
    pub metric: Metric,
    pub threshold_pct: f64,
    pub good: CommitInfo,
    pub bad: CommitInfo,
    /// Commits after GOOD up to and including BAD on BAD's first-parent line.
    pub path_length: usize,
    /// `None`: BAD is not beyond the threshold, so there is nothing to find.
    pub first_bad: Option<CommitInfo>,
    /// The commits measured by the search, in order.
    pub probes: Vec<Probe>,
    /// Distinct engine binaries the search used (commits with one engine tree share one).
    pub builds: usize,
    /// Of those, how many were built now rather than taken from the cache.
    pub fresh_builds: usize,
    /// Measurements the search made (each NPS probe is one paired measurement with GOOD).
    pub measurements: usize,
    /// The commit found against its parent, as `lab compare` reports it.
    pub comparison: Option<Comparison>,
}

/// The first bad index of `0..len`, the last being known bad and the start (before index 0)
/// known good; `is_bad` is asked about at most ⌈log2 len⌉ indices, none of them twice.
pub fn first_bad(len: usize, mut is_bad: impl FnMut(usize) -> Result<bool>) -> Result<usize> {
    if len == 0 {
        bail!("nothing to bisect: the path is empty");
    }
    // The answer lies in lo..=hi: everything before lo is good, hi is bad.
    let (mut lo, mut hi) = (0, len - 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if is_bad(mid)? {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(hi)
}

/// The builds and measurements of one bisection, each made at most once.
struct Search<'a> {
    session: &'a Session,
    request: &'a BisectRequest<'a>,
    binaries: HashMap<Oid, (Revision, EngineBinary)>,
    keys: BTreeSet<String>,
    fresh_builds: usize,
    measurements: usize,
    probes: Vec<Probe>,
    reference: Option<Measured>,
}

impl<'a> Search<'a> {
    fn build(&mut self, commit: &CommitInfo) -> Result<(Revision, EngineBinary)> {
        if let Some(built) = self.binaries.get(&commit.oid) {
            return Ok(built.clone());
        }
        let revision = revision_of(self.session, commit)?;
        let binary = self.session.build(&revision, self.request.features)?;
        if self.keys.insert(binary.key.clone()) && !binary.cached {
            self.fresh_builds += 1;
        }
        self.binaries
            .insert(commit.oid, (revision.clone(), binary.clone()));
        Ok((revision, binary))
    }

    fn measure_single(&mut self, commit: &CommitInfo) -> Result<Measured> {
        let (revision, binary) = self.build(commit)?;
        let subject = Subject::new(Side::A, commit.short.clone(), &revision, &binary);
        self.measurements += 1;
        measure_single(
            &subject,
            self.request.probe_plan,
            self.session.paths(),
            self.session.progress(),
        )
    }

    /// Measures GOOD once: the reference of the signature and instruction metrics.
    fn reference(&mut self, good: &CommitInfo) -> Result<()> {
        let mut probe = Probe {
            role: Role::Reference,
            commit: good.clone(),
            position: 0,
            value: None,
            change_pct: None,
            ci: None,
            beyond: false,
        };
        if self.request.metric == Metric::Nps {
            // Every NPS probe measures GOOD afresh beside the candidate (ABBA): nothing to
            // measure alone, but GOOD's engine is built once here.
            self.build(good)?;
        } else {
            let measured = self.measure_single(good)?;
            probe.value = self.figure(&measured);
            self.reference = Some(measured);
        }
        self.probes.push(probe);
        Ok(())
    }

    fn figure(&self, measured: &Measured) -> Option<f64> {
        match self.request.metric {
            Metric::Signature => Some(measured.measurement.signature as f64),
            Metric::Instructions => measured.measurement.instructions.per_node(),
            Metric::Nps => None,
        }
    }

    /// Measures `commit` and judges it against GOOD.
    fn judge(
        &mut self,
        good: &CommitInfo,
        commit: &CommitInfo,
        position: usize,
        role: Role,
    ) -> Result<bool> {
        let threshold = self.request.threshold_pct;
        let probe = match self.request.metric {
            Metric::Nps => {
                let (good_revision, good_binary) = self.build(good)?;
                let (revision, binary) = self.build(commit)?;
                self.measurements += 1;
                let (a, b) = measure_pair(
                    &Subject::new(Side::A, "GOOD", &good_revision, &good_binary),
                    &Subject::new(Side::B, commit.short.clone(), &revision, &binary),
                    self.request.probe_plan,
                    self.session.paths(),
                    self.session.progress(),
                )?;
                let mut settings = self.request.compare_settings.clone();
                settings.thresholds.threshold_pct = threshold;
                let comparison = compare(Kind::Bisect, settings, &a, &b, Criteria::local(false));
                let ratio = comparison.speed.cost_ratio;
                Probe {
                    role,
                    commit: commit.clone(),
                    position,
                    value: ratio.map(|r| r.estimate),
                    change_pct: comparison.speed.nps_change_pct,
                    ci: ratio.map(|r| [r.ci_low, r.ci_high]),
                    beyond: comparison.speed.verdict == Verdict::Regression,
                }
            }
            Metric::Signature | Metric::Instructions => {
                let measured = self.measure_single(commit)?;
                let value = self.figure(&measured);
                let reference = self.reference.as_ref().and_then(|r| self.figure(r));
                let change_pct = value
                    .zip(reference)
                    .map(|(value, reference)| percent_change(value / reference));
                let beyond = match self.request.metric {
                    Metric::Signature => value != reference,
                    _ => {
                        let Some(change) = change_pct else {
                            bail!(
                                "no instruction count for {}: --metric instructions needs valgrind",
                                commit.short
                            );
                        };
                        change >= threshold
                    }
                };
                Probe {
                    role,
                    commit: commit.clone(),
                    position,
                    value,
                    change_pct,
                    ci: None,
                    beyond,
                }
            }
        };
        let beyond = probe.beyond;
        self.probes.push(probe);
        Ok(beyond)
    }
}

pub fn bisect(session: &Session, request: &BisectRequest) -> Result<BisectReport> {
    let repo = session.repo();
    let good_id = range::commit_of(repo, request.good)?;
    let bad_id = range::commit_of(repo, request.bad)?;
    if request.metric == Metric::Instructions && find_valgrind().is_none() {
        bail!("--metric instructions counts instructions under valgrind, which was not found (install it, or set LAB_VALGRIND)");
    }
    let path = range::first_parent_path(repo, good_id, bad_id)?
        .into_iter()
        .map(|oid| CommitInfo::read(repo, oid))
        .collect::<Result<Vec<_>>>()?;
    let good = CommitInfo::read(repo, good_id)?;
    let bad = path.last().cloned().unwrap_or_else(|| good.clone());
    session.progress().line(&format!(
        "bisect: {} commits after {} up to {}, metric {}",
        path.len(),
        good.short,
        bad.short,
        request.metric.name()
    ));
    let mut search = Search {
        session,
        request,
        binaries: HashMap::new(),
        keys: BTreeSet::new(),
        fresh_builds: 0,
        measurements: 0,
        probes: Vec::new(),
        reference: None,
    };
    search.reference(&good)?;
    let found = if search.judge(&good, &bad, path.len(), Role::Bad)? {
        let index = first_bad(path.len(), |index| {
            session.progress().line(&format!(
                "probe {} of the path: {} {}",
                index + 1,
                path[index].short,
                path[index].subject
            ));
            search.judge(&good, &path[index], index + 1, Role::Probe)
        })?;
        Some(path[index].clone())
    } else {
        None
    };
    let comparison = match &found {
        Some(commit) => Some(compare_with_parent(&mut search, &path, &good, commit)?),
        None => None,
    };
    Ok(BisectReport {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: Kind::Bisect,
        metric: request.metric,
        threshold_pct: request.threshold_pct,
        good,
        bad,
        path_length: path.len(),
        first_bad: found,
        builds: search.keys.len(),
        fresh_builds: search.fresh_builds,
        measurements: search.measurements,
        probes: search.probes,
        comparison,
    })
}

/// `lab compare PARENT FOUND` with the compare plan: the figures a reader checks the finding by.
/// Its builds are not counted as the search's.
fn compare_with_parent(
    search: &mut Search,
    path: &[CommitInfo],
    good: &CommitInfo,
    found: &CommitInfo,
) -> Result<Comparison> {
    let index = path.iter().position(|c| c.oid == found.oid).unwrap_or(0);
    let parent = if index == 0 { good } else { &path[index - 1] };
    let session = search.session;
    session.progress().line(&format!(
        "comparing {} with its parent {}",
        found.short, parent.short
    ));
    let (keys, fresh) = (search.keys.clone(), search.fresh_builds);
    let (a_revision, a_binary) = search.build(parent)?;
    let (b_revision, b_binary) = search.build(found)?;
    (search.keys, search.fresh_builds) = (keys, fresh);
    let (a, b) = measure_pair(
        &Subject::new(Side::A, "A", &a_revision, &a_binary),
        &Subject::new(Side::B, "B", &b_revision, &b_binary),
        search.request.compare_plan,
        session.paths(),
        session.progress(),
    )?;
    Ok(compare(
        Kind::Compare,
        search.request.compare_settings.clone(),
        &a,
        &b,
        Criteria::local(false),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search over `len` commits whose first bad one is `bad`, returning the answer
    /// and the indices probed.
    fn search(len: usize, bad: usize) -> (usize, Vec<usize>) {
        let mut probed = Vec::new();
        let found = first_bad(len, |index| {
            probed.push(index);
            Ok(index >= bad)
        })
        .unwrap();
        (found, probed)
    }

    #[test]
    fn binary_search_finds_every_first_bad_commit_in_log2_probes() {
        for len in 1..=40 {
            let limit = (len as f64).log2().ceil() as usize;
            for bad in 0..len {
                let (found, probed) = search(len, bad);
                assert_eq!(found, bad, "len {len}");
                assert!(probed.len() <= limit, "len {len} bad {bad}: {probed:?}");
                let distinct: BTreeSet<_> = probed.iter().collect();
                assert_eq!(distinct.len(), probed.len(), "{probed:?}");
                assert!(!probed.contains(&(len - 1)), "the last is known bad");
            }
        }
    }

    #[test]
    fn sixteen_commits_take_four_probes() {
        assert_eq!(search(16, 10).1.len(), 4);
    }
}
