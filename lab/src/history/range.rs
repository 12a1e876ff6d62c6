//! Which commits a history or a bisection visits: a range `A..B` read as git reads it, walked
//! along first parents (merges count as one step of the branch they land on), oldest first, and
//! thinned by `--every` and `--max`. Only reads the repository.

use anyhow::{anyhow, bail, Result};
use git2::{Oid, Repository, Sort};
use serde::Serialize;

/// A commit as the history table and the bisection name it.
#[derive(Debug, Clone, Serialize)]
pub struct CommitInfo {
    /// The full object id.
    pub id: String,
    /// The first ten hex digits, as the lab's other reports show commits.
    pub short: String,
    /// Commit date, UTC, YYYY-MM-DD.
    pub date: String,
    /// The first line of the message.
    pub subject: String,
    #[serde(skip)]
    pub oid: Oid,
}

impl CommitInfo {
    pub(crate) fn read(repo: &Repository, oid: Oid) -> Result<Self> {
        let commit = repo
            .find_commit(oid)
            .map_err(|e| anyhow!("reading commit {oid}: {}", e.message()))?;
        let id = oid.to_string();
        Ok(Self {
            short: crate::input::short_commit(&id).to_string(),
            id,
            date: crate::calendar::utc_date(commit.time().seconds(), '-'),
            subject: commit.summary().unwrap_or_default().trim().to_string(),
            oid,
        })
    }
}

/// `A..B` split into its ends; an empty end is `HEAD`, as in git. `A...B` (a symmetric
/// difference) has no first-parent order and is refused.
pub(crate) fn parse_range(range: &str) -> Result<(String, String)> {
    if range.contains("...") {
        bail!("'{range}' is a symmetric difference (A...B); give a range A..B");
    }
    let Some((from, to)) = range.split_once("..") else {
        bail!("'{range}' is not a range: give A..B (the commits after A up to and including B)");
    };
    let end = |side: &str| {
        if side.is_empty() {
            "HEAD".to_string()
        } else {
            side.to_string()
        }
    };
    Ok((end(from), end(to)))
}

/// A revision that must name a commit (a range cannot start or end at `WORKTREE` or a tree).
pub(crate) fn commit_of(repo: &Repository, spec: &str) -> Result<Oid> {
    if spec == crate::engine::revision::WORKTREE {
        bail!("{spec} has no history: a range runs between commits");
    }
    let object = repo
        .revparse_single(spec)
        .map_err(|e| crate::engine::revision::unknown_revision(spec, &e))?;
    let commit = object
        .peel_to_commit()
        .map_err(|_| anyhow!("revision '{spec}' does not name a commit"))?;
    Ok(commit.id())
}

/// The commits of `from..to` on `to`'s first-parent line, oldest first: what `git log
/// --first-parent --reverse from..to` lists.
pub(crate) fn first_parent_range(repo: &Repository, from: Oid, to: Oid) -> Result<Vec<Oid>> {
    let walk_error = |e: git2::Error| anyhow!("walking the history: {}", e.message());
    let mut walk = repo.revwalk().map_err(walk_error)?;
    walk.push(to).map_err(walk_error)?;
    walk.hide(from).map_err(walk_error)?;
    walk.simplify_first_parent().map_err(walk_error)?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)
        .map_err(walk_error)?;
    walk.collect::<std::result::Result<Vec<_>, _>>()
        .map_err(walk_error)
}

/// The first-parent path from `good` (exclusive) to `bad` (inclusive), refusing a `good` that
/// is not on it: a bisection judges every commit of the path against `good`.
pub(crate) fn first_parent_path(repo: &Repository, good: Oid, bad: Oid) -> Result<Vec<Oid>> {
    let path = first_parent_range(repo, good, bad)?;
    let short = |oid: Oid| crate::input::short_commit(&oid.to_string()).to_string();
    let (good_short, bad_short) = (short(good), short(bad));
    let Some(oldest) = path.first() else {
        bail!("nothing to bisect: BAD {bad_short} is GOOD {good_short} or one of its ancestors");
    };
    let parent = repo
        .find_commit(*oldest)
        .ok()
        .and_then(|commit| commit.parent_id(0).ok());
    if parent != Some(good) {
        bail!(
            "GOOD {good_short} is not on the first-parent history of BAD {bad_short}: give a GOOD \
             that BAD descends from along first parents"
        );
    }
    Ok(path)
}

/// Thins commits (oldest first): every `every`th counted back from the newest, so the tip of
/// the range is always kept, then the newest `max` of those.
pub(crate) fn thin<T: Clone>(commits: &[T], every: usize, max: Option<usize>) -> Vec<T> {
    let every = every.max(1);
    let newest = commits.len().saturating_sub(1);
    let mut kept: Vec<T> = commits
        .iter()
        .enumerate()
        .filter(|(index, _)| (newest - index).is_multiple_of(every))
        .map(|(_, commit)| commit.clone())
        .collect();
    if let Some(max) = max {
        let skip = kept.len().saturating_sub(max);
        kept.drain(..skip);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_read_as_git_reads_them() {
        assert_eq!(
            parse_range("v1..main").unwrap(),
            ("v1".to_string(), "main".to_string())
        );
        assert_eq!(
            parse_range("HEAD~5..").unwrap(),
            ("HEAD~5".to_string(), "HEAD".to_string())
        );
        assert!(parse_range("a...b")
            .unwrap_err()
            .to_string()
            .contains("symmetric"));
        assert!(parse_range("HEAD")
            .unwrap_err()
            .to_string()
            .contains("A..B"));
    }

    #[test]
    fn thinning_keeps_the_tip_and_the_newest() {
        let commits: Vec<u32> = (1..=7).collect();
        assert_eq!(thin(&commits, 1, None), commits);
        assert_eq!(thin(&commits, 2, None), [1, 3, 5, 7]);
        assert_eq!(thin(&commits, 3, None), [1, 4, 7]);
        assert_eq!(thin(&commits, 2, Some(2)), [5, 7]);
        assert_eq!(thin(&commits, 1, Some(10)), commits);
        assert!(thin::<u32>(&[], 2, Some(1)).is_empty());
    }
}
