//! A's stored node budgets: one JSON file per machine, engine binary and time control under
//! `target/lab/budgets/`, written atomically, validated on load. A verdict times A's clock games
//! once and keeps the budget they give, so that the same verdict run again on this machine plays
//! the same fixed-node games (a measured budget moves with the bench's NPS and the clock games'
//! lengths ([`super::CLOCK_PROBE_GAMES`]); a stored one does not).

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use super::stored::{self, StoredFile};
use super::ClockProbe;
use crate::games::rules::Limit;
use crate::paths::LabPaths;

pub(crate) const NODE_BUDGET_KIND: &str = "lab-node-budget";
pub(crate) const NODE_BUDGET_SCHEMA_VERSION: u32 = 1;

/// Nodes per second no engine's bench reaches on one thread (100 times a fast one's).
const MAX_NPS: f64 = 1e9;

/// A's nodes per move at a clock on one machine, and the clock games that gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredBudget {
    pub kind: String,
    pub schema_version: u32,
    /// The machine's identity (`history::store::machine_id`): a budget applies on it only.
    pub machine_id: String,
    /// A's build-cache key, or the git blob id of an `exe:` binary.
    pub binary: String,
    /// The verdict's clock.
    pub limit: Limit,
    pub nodes_per_move: u64,
    /// A's fastest bench NPS when the clock games were played: the budget is this × their
    /// mean time per move.
    pub nps: f64,
    pub(crate) clock_probe: ClockProbe,
    /// When the clock games were played, seconds since the Unix epoch.
    pub measured_unix: u64,
}

impl StoredFile for StoredBudget {
    const KIND: &'static str = NODE_BUDGET_KIND;
    const SCHEMA_VERSION: u32 = NODE_BUDGET_SCHEMA_VERSION;
    const INPUT: crate::input::FileCap = crate::input::NODE_BUDGET;

    fn kind(&self) -> (&str, u32) {
        (&self.kind, self.schema_version)
    }

    /// A clock, and a budget that is the product it claims to be.
    fn check(&self) -> Result<()> {
        let Limit::Clock {
            base_ms,
            increment_ms,
        } = self.limit
        else {
            bail!("limit is {}, not a clock", self.limit);
        };
        // What a clock game can show: no move longer than the whole clock, a bench slower
        // than MAX_NPS. A budget past them would play games that never end.
        let longest_move = base_ms.saturating_add(increment_ms) as f64;
        let probe = &self.clock_probe;
        if probe.games == 0
            || probe.moves == 0
            || !(probe.mean_time_ms.is_finite() && probe.mean_time_ms <= longest_move)
        {
            bail!(
                "clock_probe ({} games, {} moves, {} ms a move) is not what games at {} can show",
                probe.games,
                probe.moves,
                probe.mean_time_ms,
                self.limit
            );
        }
        if !self.nps.is_finite() || self.nps > MAX_NPS {
            bail!("nps {} is above {MAX_NPS}", self.nps);
        }
        if self.machine_id.is_empty() || self.binary.is_empty() {
            bail!("machine_id and binary must not be empty");
        }
        if super::nodes_in(self.nps, self.clock_probe.mean_time_ms) != Some(self.nodes_per_move) {
            bail!(
                "nodes_per_move {} is not nps {} × mean_time_ms {}",
                self.nodes_per_move,
                self.nps,
                self.clock_probe.mean_time_ms
            );
        }
        Ok(())
    }
}

/// Where the budgets live: `target/lab/budgets/`.
pub(crate) fn budgets_dir(paths: &LabPaths) -> PathBuf {
    paths.root.join("budgets")
}

/// Writes `budget` atomically under `dir`, replacing the budget of the same key.
pub(crate) fn save(dir: &Path, budget: &StoredBudget) -> Result<PathBuf> {
    let path = stored::path_for(dir, &budget.machine_id, &budget.binary, &budget.limit);
    stored::save(&path, budget)?;
    Ok(path)
}

/// Reads one budget file: a regular file of bounded size, valid JSON, a valid budget.
pub fn load(path: &Path) -> Result<StoredBudget> {
    stored::load(path)
}

/// The stored budget of `binary` at `limit` on `machine_id` and its file: `Ok(None)` when there
/// is none; an error when the file is there but unusable, or stored under another key.
pub(crate) fn find(
    dir: &Path,
    machine_id: &str,
    binary: &str,
    limit: &Limit,
) -> Result<Option<(StoredBudget, PathBuf)>> {
    let path = stored::path_for(dir, machine_id, binary, limit);
    if !path.exists() {
        return Ok(None);
    }
    let budget = load(&path)?;
    if budget.machine_id != machine_id || budget.binary != binary || budget.limit != *limit {
        bail!(
            "{} holds the budget of another machine, binary or clock",
            path.display()
        );
    }
    Ok(Some((budget, path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget() -> StoredBudget {
        StoredBudget {
            kind: NODE_BUDGET_KIND.into(),
            schema_version: NODE_BUDGET_SCHEMA_VERSION,
            machine_id: "4ebb7cd74a65".into(),
            binary: "37569aadf566c0ffee".into(),
            limit: Limit::parse_tc("2+0.02").unwrap(),
            nodes_per_move: 157_010,
            nps: 3_393_979.0,
            clock_probe: ClockProbe {
                games: 4,
                moves: 404,
                mean_time_ms: 46.261,
                nodes_per_move: Some(140_000.0),
            },
            measured_unix: 1_796_000_000,
        }
    }

    fn consistent(mut budget: StoredBudget) -> StoredBudget {
        budget.nodes_per_move =
            super::super::nodes_in(budget.nps, budget.clock_probe.mean_time_ms).unwrap();
        budget
    }

    #[test]
    fn a_saved_budget_is_found_under_its_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let stored = consistent(budget());
        let path = save(dir.path(), &stored).unwrap();
        assert!(
            path.ends_with("4ebb7cd74a65-37569aadf566-2_0_02.json"),
            "{path:?}"
        );
        let (found, at) = find(dir.path(), "4ebb7cd74a65", &stored.binary, &stored.limit)
            .unwrap()
            .unwrap();
        assert_eq!((found, at), (stored.clone(), path));
        let other_clock = Limit::parse_tc("5+0.05").unwrap();
        assert!(
            find(dir.path(), "4ebb7cd74a65", &stored.binary, &other_clock)
                .unwrap()
                .is_none()
        );
        assert!(find(dir.path(), "another", &stored.binary, &stored.limit)
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_budget_that_is_not_its_own_product_or_not_at_a_clock_is_never_stored_or_used() {
        let dir = tempfile::tempdir().unwrap();
        let mut wrong = consistent(budget());
        wrong.nodes_per_move += 1000;
        assert!(save(dir.path(), &wrong).is_err());
        let mut nodes = consistent(budget());
        nodes.limit = Limit::Nodes { nodes: 1000 };
        assert!(save(dir.path(), &nodes).is_err());
        // A crafted file could ask for games that never end: a move longer than the clock, an
        // impossible NPS, or no games at all behind it.
        let mut long = budget();
        long.clock_probe.mean_time_ms = 2_100.0;
        assert!(save(dir.path(), &consistent(long)).is_err());
        let mut fast = budget();
        fast.nps = 5e9;
        assert!(save(dir.path(), &consistent(fast)).is_err());
        let mut unplayed = budget();
        unplayed.clock_probe.games = 0;
        assert!(save(dir.path(), &consistent(unplayed)).is_err());
        let mut nan = budget();
        nan.clock_probe.mean_time_ms = f64::NAN;
        assert!(save(dir.path(), &nan).is_err());
        assert!(save(dir.path(), &consistent(budget())).is_ok());

        // Written by hand (or by another lab) under a budget's name: refused on load.
        let stored = consistent(budget());
        let path = stored::path_for(dir.path(), "4ebb7cd74a65", &stored.binary, &stored.limit);
        std::fs::create_dir_all(dir.path()).unwrap();
        std::fs::write(&path, serde_json::to_string(&wrong).unwrap()).unwrap();
        let error = find(dir.path(), "4ebb7cd74a65", &stored.binary, &stored.limit).unwrap_err();
        assert!(
            format!("{error:#}").contains("not a usable node budget"),
            "{error:#}"
        );
        std::fs::write(&path, "{ not json").unwrap();
        assert!(find(dir.path(), "4ebb7cd74a65", &stored.binary, &stored.limit).is_err());
        // Another key's budget copied under this name.
        let mut other = consistent(budget());
        other.binary = "ffffffffffff".into();
        std::fs::write(&path, serde_json::to_string(&other).unwrap()).unwrap();
        let error = find(dir.path(), "4ebb7cd74a65", &stored.binary, &stored.limit).unwrap_err();
        assert!(
            format!("{error:#}").contains("another machine"),
            "{error:#}"
        );
    }

    proptest::proptest! {
        /// Whatever the clock games measured, a budget that is stored is one the lab would use
        /// again, read back unchanged, and its games end: no move over the clock.
        #[test]
        fn a_stored_budget_reads_back_whole_and_is_one_a_clock_game_can_show(
            nps in 0.0f64..2e9,
            mean_time_ms in 0.0f64..5_000.0,
            games in 0u64..20,
            moves in 0u64..5_000,
            base_ms in 1u64..10_000,
            increment_ms in 0u64..200,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let mut candidate = budget();
            candidate.nps = nps;
            candidate.clock_probe.mean_time_ms = mean_time_ms;
            candidate.clock_probe.games = games;
            candidate.clock_probe.moves = moves;
            candidate.limit = Limit::Clock { base_ms, increment_ms };
            let Some(nodes) = super::super::nodes_in(nps, mean_time_ms) else {
                return Ok(());
            };
            candidate.nodes_per_move = nodes;
            if let Ok(path) = save(dir.path(), &candidate) {
                let found = find(dir.path(), &candidate.machine_id, &candidate.binary, &candidate.limit)
                    .unwrap()
                    .unwrap();
                proptest::prop_assert_eq!(&found, &(candidate.clone(), path));
                proptest::prop_assert!(mean_time_ms <= (base_ms + increment_ms) as f64);
                proptest::prop_assert!(nps <= MAX_NPS && games > 0 && moves > 0);
            }
        }
    }
}
