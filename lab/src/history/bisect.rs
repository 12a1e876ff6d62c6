//! `lab bisect GOOD BAD`: the first commit on BAD's first-parent line after GOOD whose metric
//! moved beyond a threshold relative to GOOD, found by binary search. Each commit is built and
//! measured at most once per run; the commit found is then compared with its parent as
//! `lab compare` does.

use std::collections::{BTreeSet, HashMap};

use anyhow::{bail, Context, Result};
use git2::Oid;
use serde::Serialize;

use super::range::{self, CommitInfo};
use super::revision_of;
use super::store::{tail, FAILURE_TAIL_BYTES};
use crate::analysis::compare::{measure_and_compare, percent_change, Comparison, Settings};
use crate::analysis::measure::{measure_single, Measured, Plan, Subject};
use crate::analysis::stats::Change;
use crate::engine::build::EngineBinary;
use crate::engine::callgrind::find_valgrind;
use crate::engine::revision::Revision;
use crate::lab::Session;
use crate::schema::{Kind, LAB_JSON_SCHEMA_VERSION};
use crate::side::Side;

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
    pub(crate) fn name(self) -> &'static str {
        match self {
            Metric::Instructions => "instructions",
            Metric::Nps => "nps",
            Metric::Signature => "signature",
        }
    }
}

pub(crate) struct BisectRequest<'a> {
    pub(crate) good: &'a str,
    pub(crate) bad: &'a str,
    pub(crate) metric: Metric,
    /// Percent; ignored for the signature.
    pub(crate) threshold_pct: f64,
    /// How the probes measure (built for the metric: the fewest runs it needs).
    pub(crate) probe_plan: &'a Plan,
    /// How the commit found is compared with its parent.
    pub(crate) compare_plan: &'a Plan,
    /// The thresholds and settings of that comparison.
    pub(crate) compare_settings: Settings,
    pub(crate) features: &'a [String],
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
    /// `None`: BAD is not beyond the threshold, so there is nothing to find, or the first bad
    /// commit lies among skipped ones (`first_bad_among`).
    pub first_bad: Option<CommitInfo>,
    /// When the answer lies among commits that do not build: the range the search could not
    /// split, oldest first, its last commit bad and every other one skipped; else empty.
    pub first_bad_among: Vec<CommitInfo>,
    /// Commits the search skipped because they do not build, in the order tried.
    pub skipped: Vec<Skipped>,
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

/// How one commit of the path was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Judged {
    Good,
    Bad,
    /// It cannot be judged (it does not build): git bisect's `skip`.
    Skip,
}

/// Where the first bad commit lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// Exactly this index.
    At(usize),
    /// One of `first..=last`: `last` is bad, everything before `first` good, and every index
    /// from `first` to `last - 1` was skipped.
    Among { first: usize, last: usize },
}

/// A commit of the path that does not build, skipped as git bisect's `skip` does.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub commit: CommitInfo,
    /// Position on the path from GOOD (0) to BAD.
    pub position: usize,
    /// The end of the build's error (at most `store::FAILURE_TAIL_BYTES` bytes).
    pub error: String,
}

/// The first bad index of `0..len`, the last being known bad and the start (before index 0)
/// known good. Without skips `judge` is asked about at most ⌈log2 len⌉ indices; none is asked
/// twice. A skipped index is replaced by the nearest unjudged one inside the range still open
/// (as git bisect does), and when every index left is skipped the answer is that range.
pub(crate) fn first_bad(
    len: usize,
    mut judge: impl FnMut(usize) -> Result<Judged>,
) -> Result<Found> {
    if len == 0 {
        bail!("nothing to bisect: the path is empty");
    }
    // The answer lies in lo..=hi: everything before lo is good, hi is bad.
    let (mut lo, mut hi) = (0, len - 1);
    let mut skipped = BTreeSet::new();
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // The unjudged index of lo..hi nearest the middle, below it first on a tie.
        let probe = (0..hi - lo)
            .flat_map(|distance| [mid.checked_sub(distance), mid.checked_add(distance + 1)])
            .flatten()
            .find(|&index| (lo..hi).contains(&index) && !skipped.contains(&index));
        let Some(probe) = probe else {
            return Ok(Found::Among {
                first: lo,
                last: hi,
            });
        };
        match judge(probe)? {
            Judged::Bad => hi = probe,
            Judged::Good => lo = probe + 1,
            Judged::Skip => {
                skipped.insert(probe);
            }
        }
    }
    Ok(Found::At(hi))
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
    skipped: Vec<Skipped>,
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

    /// The commit's engine, or `None` (the commit recorded as skipped) when it does not build.
    fn build_or_skip(
        &mut self,
        commit: &CommitInfo,
        position: usize,
    ) -> Result<Option<(Revision, EngineBinary)>> {
        match self.build(commit) {
            Ok(built) => Ok(Some(built)),
            Err(error) => {
                let error = format!("{error:#}");
                self.session.progress().line(&format!(
                    "skipping {}: it does not build ({})",
                    commit.short,
                    super::last_line(&error)
                ));
                self.skipped.push(Skipped {
                    commit: commit.clone(),
                    position,
                    error: tail(&error, FAILURE_TAIL_BYTES),
                });
                Ok(None)
            }
        }
    }

    fn measure_single(&mut self, commit: &CommitInfo) -> Result<Measured> {
        let built = self.build(commit)?;
        self.measure_built(commit, built)
    }

    fn measure_built(
        &mut self,
        commit: &CommitInfo,
        (revision, binary): (Revision, EngineBinary),
    ) -> Result<Measured> {
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
    ) -> Result<Judged> {
        let threshold = self.request.threshold_pct;
        let Some(built) = self.build_or_skip(commit, position)? else {
            return Ok(Judged::Skip);
        };
        let probe = match self.request.metric {
            Metric::Nps => {
                let (good_revision, good_binary) = self.build(good)?;
                let (revision, binary) = built;
                self.measurements += 1;
                let mut settings = self.request.compare_settings.clone();
                settings.thresholds.threshold_pct = threshold;
                let (comparison, _, _) = measure_and_compare(
                    Kind::Bisect,
                    settings,
                    (
                        &Subject::new(Side::A, "GOOD", &good_revision, &good_binary),
                        &Subject::new(Side::B, commit.short.clone(), &revision, &binary),
                    ),
                    self.request.probe_plan,
                    self.session.paths(),
                    self.session.progress(),
                )?;
                let ratio = comparison.speed.cost_ratio;
                Probe {
                    role,
                    commit: commit.clone(),
                    position,
                    value: ratio.map(|r| r.estimate),
                    change_pct: comparison.speed.nps_change_pct,
                    ci: ratio.map(|r| [r.ci_low, r.ci_high]),
                    beyond: comparison.speed.change == Change::Regression,
                }
            }
            Metric::Signature | Metric::Instructions => {
                let measured = self.measure_built(commit, built)?;
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
        Ok(if beyond { Judged::Bad } else { Judged::Good })
    }
}

pub(crate) fn bisect(session: &Session, request: &BisectRequest) -> Result<BisectReport> {
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
        skipped: Vec::new(),
        reference: None,
    };
    search
        .reference(&good)
        .with_context(|| format!("GOOD {} cannot be measured", good.short))?;
    let found = match search.judge(&good, &bad, path.len(), Role::Bad)? {
        Judged::Skip => bail!(
            "BAD {} does not build, so the bisection has no bad end; pick a BAD that builds: {}",
            bad.short,
            search
                .skipped
                .last()
                .map_or("", |skipped| super::last_line(&skipped.error))
        ),
        Judged::Good => None,
        Judged::Bad => Some(first_bad(path.len(), |index| {
            session.progress().line(&format!(
                "probe {} of the path: {} {}",
                index + 1,
                path[index].short,
                path[index].subject
            ));
            search.judge(&good, &path[index], index + 1, Role::Probe)
        })?),
    };
    let (found, among) = match found {
        Some(Found::At(index)) => (Some(path[index].clone()), Vec::new()),
        Some(Found::Among { first, last }) => {
            session.progress().line(&format!(
                "the first bad commit is one of {} commits from {} to {}: the ones before {} \
                 do not build",
                last - first + 1,
                path[first].short,
                path[last].short,
                path[last].short
            ));
            (None, path[first..=last].to_vec())
        }
        None => (None, Vec::new()),
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
        first_bad_among: among,
        first_bad: found,
        skipped: search.skipped,
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
    let (comparison, _, _) = measure_and_compare(
        Kind::Compare,
        search.request.compare_settings.clone(),
        (
            &Subject::new(Side::A, "A", &a_revision, &a_binary),
            &Subject::new(Side::B, "B", &b_revision, &b_binary),
        ),
        search.request.compare_plan,
        session.paths(),
        session.progress(),
    )?;
    Ok(comparison)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search over `len` commits whose first bad one is `bad`, the indices in `broken`
    /// skipped, returning the answer and the indices probed.
    fn search_skipping(len: usize, bad: usize, broken: &[usize]) -> (Found, Vec<usize>) {
        let mut probed = Vec::new();
        let found = first_bad(len, |index| {
            probed.push(index);
            Ok(if broken.contains(&index) {
                Judged::Skip
            } else if index >= bad {
                Judged::Bad
            } else {
                Judged::Good
            })
        })
        .unwrap();
        (found, probed)
    }

    fn search(len: usize, bad: usize) -> (usize, Vec<usize>) {
        match search_skipping(len, bad, &[]) {
            (Found::At(found), probed) => (found, probed),
            other => panic!("{other:?}"),
        }
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

    #[test]
    fn commits_that_do_not_build_are_skipped_or_named_as_the_range_left() {
        for len in 1..=12 {
            for bad in 0..len {
                // Every set of broken commits below the last (which is known bad).
                for mask in 0u32..(1 << (len - 1)) {
                    let broken: Vec<usize> = (0..len - 1).filter(|i| mask >> i & 1 == 1).collect();
                    let (found, probed) = search_skipping(len, bad, &broken);
                    let distinct: BTreeSet<_> = probed.iter().collect();
                    assert_eq!(distinct.len(), probed.len(), "asked twice: {probed:?}");
                    match found {
                        Found::At(index) => {
                            assert_eq!(index, bad, "len {len} broken {broken:?}");
                        }
                        Found::Among { first, last } => {
                            assert!(first <= bad && bad <= last, "{first}..={last} misses {bad}");
                            assert!(first < last);
                            assert!((first..last).all(|i| broken.contains(&i)), "{broken:?}");
                            assert!(!broken.contains(&last) && last >= bad);
                        }
                    }
                }
            }
        }
        // The bad commit right after a broken one: the range is the two of them.
        assert_eq!(
            search_skipping(8, 4, &[3]).0,
            Found::Among { first: 3, last: 4 }
        );
    }
}
