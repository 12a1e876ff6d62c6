//! `lab match merge`: the shards of one match, checked to be one match, pooled into one report.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use super::conclusion::MergedShards;
use super::game::GameRecord;
use super::results::{differences, Header, Shard};
use super::runner::Stop;
use super::sprt::SprtDecision;
use super::summary::summarize;
use super::{build_report, game, results, MatchReport, ShardStarted};

/// `lab match merge FILES`.
pub(crate) fn merge(files: &[PathBuf], pgn: Option<&Path>) -> Result<MatchReport> {
    let mut base: Option<(PathBuf, Header)> = None;
    let mut shards: Vec<Shard> = Vec::new();
    let mut started: Vec<ShardStarted> = Vec::new();
    let mut games: Vec<GameRecord> = Vec::new();
    let mut owner: std::collections::HashMap<game::GameId, PathBuf> = Default::default();
    for file in files {
        let bytes = crate::input::read_bytes(file, crate::input::RESULTS)?;
        let (header, shard_games, whole_len) = results::parse(&bytes, file)?;
        warn_of_a_torn_line(file, bytes.len() as u64 - whole_len);
        if let Some((first, base_header)) = &base {
            let changed = differences(&base_header.settings, &header.settings);
            if !changed.is_empty() {
                bail!(
                    "{} and {} are not shards of one match: they differ in {}",
                    first.display(),
                    file.display(),
                    changed.join(", ")
                );
            }
            if header.shard.count != base_header.shard.count {
                bail!(
                    "{} is shard {}/{} but {} is shard {}/{}: shards must split the match the same way",
                    file.display(),
                    header.shard.index,
                    header.shard.count,
                    first.display(),
                    base_header.shard.index,
                    base_header.shard.count
                );
            }
        } else {
            base = Some((file.clone(), header.clone()));
        }
        if shards.contains(&header.shard) {
            bail!(
                "shard {}/{} is given twice ({}): merging it again would count its games twice",
                header.shard.index,
                header.shard.count,
                file.display()
            );
        }
        shards.push(header.shard);
        if let Some(provenance) = &header.started {
            started.push(ShardStarted {
                shard: header.shard,
                started: provenance.clone(),
            });
        }
        for game in shard_games {
            if let Some(other) = owner.insert(game.id, file.clone()) {
                bail!(
                    "pair {} game {} is in both {} and {}",
                    game.id.pair,
                    game.id.game,
                    other.display(),
                    file.display()
                );
            }
            games.push(game);
        }
    }
    let Some((_, header)) = base else {
        bail!("no results files to merge");
    };
    games.sort_by_key(|game| game.id);
    shards.sort_by_key(|shard| shard.index);
    started.sort_by_key(|started| started.shard.index);
    if let Some(path) = pgn {
        let text: String = games.iter().map(|game| game.pgn.as_str()).collect();
        crate::paths::write_new(path, text.as_bytes())?;
    }
    let summary_stop = match summarize(&games, header.settings.sprt.as_ref()).sprt {
        Some(state) if state.result != SprtDecision::Continue => Stop::Sprt(state.result),
        _ => Stop::MaxGames,
    };
    let mut report = build_report(&header.settings, shards.clone(), &games, &summary_stop);
    report.pgn_file = pgn.map(|path| path.display().to_string());
    report.shards_started = started;
    report.conclusion.merged = Some(MergedShards {
        merged: shards.len() as u32,
        count: header.shard.count,
    });
    Ok(report)
}

/// A last line with no newline is a game being written when the file was read (a running
/// match, a copy taken mid-write): the reader leaves it out, and the merge says so.
fn warn_of_a_torn_line(file: &Path, torn_len: u64) {
    if torn_len > 0 {
        crate::progress::warning(&format!(
            "warning: {}: its last line has no newline ({torn_len} bytes, a game still being written?): left out",
            file.display(),
        ));
    }
}
