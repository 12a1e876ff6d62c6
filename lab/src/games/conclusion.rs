//! How a match ended, and the exit code that follows from it. The sentence a reader sees (the
//! JSON's `verdict`) is the report's to write (`report::matches`).

use super::results::Shard;
use crate::exit::Exit;

/// How a match ended: its SPRT's decision, or how far it got without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Conclusion {
    pub(crate) ending: Ending,
    /// Of a merge: how many of the match's shards it pooled; `None` for a match that was played.
    pub(crate) merged: Option<MergedShards>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The SPRT accepted H1: B is stronger.
    AcceptedH1,
    /// The SPRT accepted H0: B is not stronger by elo1.
    AcceptedH0,
    /// The SPRT is undecided and every game of the budget was played.
    BudgetSpent,
    /// The SPRT is undecided short of the budget: a step of a longer match, a shard's share or
    /// a merge of some shards.
    Undecided { played: u64, max_games: u64 },
    /// Without an SPRT, every game was played.
    Finished,
    /// Without an SPRT, short of the budget.
    Played { played: u64, max_games: u64 },
    /// SIGINT or SIGTERM ended the games; `--resume` plays the rest.
    Interrupted { played: u64, max_games: u64 },
    /// This shard's games were played; `lab match merge` pools the shards.
    ShardFinished { shard: Shard },
}

/// A merge's shards: how many it pooled, of how many the match has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MergedShards {
    pub(crate) merged: u32,
    pub(crate) count: u32,
}

impl MergedShards {
    pub(crate) fn all(self) -> bool {
        self.merged == self.count
    }
}

impl Conclusion {
    /// The conclusion of a match that was played, not merged.
    pub(crate) fn of_match(ending: Ending) -> Conclusion {
        Conclusion {
            ending,
            merged: None,
        }
    }

    /// The lab's exit code. A merge short of its budget without a decision is not finished,
    /// whatever a played shard's own share said: a missing shard or an unfinished run must not
    /// pass a CI job.
    pub(crate) fn exit(&self) -> Exit {
        match self.ending {
            Ending::AcceptedH1 | Ending::Finished | Ending::ShardFinished { .. } => Exit::Clean,
            Ending::Played { .. } if self.merged.is_some() => Exit::Undecided,
            Ending::Played { .. } => Exit::Clean,
            Ending::AcceptedH0 => Exit::Regression,
            Ending::BudgetSpent | Ending::Undecided { .. } => Exit::Undecided,
            Ending::Interrupted { .. } => Exit::Interrupted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merge_short_of_its_budget_without_a_decision_is_undecided_though_a_match_is_not() {
        let ending = Ending::Played {
            played: 3,
            max_games: 4,
        };
        assert_eq!(Conclusion::of_match(ending).exit(), Exit::Clean);
        let merged = Conclusion {
            ending,
            merged: Some(MergedShards {
                merged: 2,
                count: 2,
            }),
        };
        assert_eq!(merged.exit(), Exit::Undecided);
        let finished = Conclusion {
            ending: Ending::Finished,
            ..merged
        };
        assert_eq!(finished.exit(), Exit::Clean);
    }

    #[test]
    fn each_decision_exits_as_documented() {
        let code = |ending| Conclusion::of_match(ending).exit().code();
        assert_eq!(code(Ending::AcceptedH1), 0);
        assert_eq!(code(Ending::AcceptedH0), 1);
        assert_eq!(code(Ending::BudgetSpent), 3);
        assert_eq!(
            code(Ending::Interrupted {
                played: 1,
                max_games: 2
            }),
            130
        );
    }
}
