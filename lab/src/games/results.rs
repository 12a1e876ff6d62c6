//! The results file of a match: one JSON object a line, a header with everything that decides
//! the games, then one line per finished game, appended and flushed as the game ends. It is
//! what `--resume` continues and what `lab match merge` pools; the PGN is derived from it.
//!
//! A line is written with a single `write` on a file opened for appending, so an interrupted
//! lab leaves at most a torn last line, which readers ignore and `--resume` cuts off.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::book::BookIdentity;
use super::game::{GameId, GameRecord};
use super::rules::{one_or_per_side, DrawAdjudication, ResignAdjudication, SideLimits};
use super::sprt::{EloModel, Sprt};

pub const RESULTS_KIND: &str = "lab-match-results";
pub const RESULTS_SCHEMA_VERSION: u32 = 1;

/// Who plays: enough to tell whether two results files played the same engines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineIdentity {
    /// As given: a revision (`HEAD`, `WORKTREE`, a SHA) or `exe:PATH`.
    pub spec: String,
    /// The PGN name.
    pub name: String,
    /// The build-cache key of a revision's binary, or the git blob id of an `exe:` binary.
    pub binary: String,
    /// The commit a revision resolved to.
    pub commit: Option<String>,
    /// `setoption` pairs sent at start-up (including Hash).
    pub options: Vec<(String, String)>,
}

/// Everything that decides which games are played and how: two results files can be pooled
/// when these are equal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchSettings {
    /// A, then B.
    pub engines: [EngineIdentity; 2],
    /// A's limit, then B's; a file written before sides had limits of their own has one
    /// `limit`, read as both.
    #[serde(alias = "limit", deserialize_with = "one_or_per_side")]
    pub limits: SideLimits,
    pub book: BookIdentity,
    pub seed: u64,
    pub draw_adjudication: Option<DrawAdjudication>,
    pub resign_adjudication: Option<ResignAdjudication>,
    pub timemargin_ms: u64,
    /// The game budget of the whole match (all shards).
    pub games: u64,
    pub sprt: Option<Sprt>,
    pub elo_model: EloModel,
}

/// Shard I of N plays the pairs whose index is I-1 modulo N.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// `I/N` with 1 ≤ I ≤ N.
    pub fn parse(spec: &str) -> Result<Shard> {
        let parsed = spec.split_once('/').and_then(|(i, n)| {
            let (index, count) = (i.trim().parse().ok()?, n.trim().parse().ok()?);
            (1..=count)
                .contains(&index)
                .then_some(Shard { index, count })
        });
        parsed.with_context(|| format!("--shard {spec}: expected I/N with 1 <= I <= N, e.g. 2/4"))
    }

    pub fn owns(self, pair: u64) -> bool {
        pair % u64::from(self.count) == u64::from(self.index - 1)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub kind: String,
    pub schema_version: u32,
    pub shard: Shard,
    pub settings: MatchSettings,
}

impl Header {
    pub fn new(settings: MatchSettings, shard: Shard) -> Header {
        Header {
            kind: RESULTS_KIND.to_string(),
            schema_version: RESULTS_SCHEMA_VERSION,
            shard,
            settings,
        }
    }
}

/// A results file open for appending games.
pub struct ResultsFile {
    path: PathBuf,
    file: File,
}

impl ResultsFile {
    /// Starts a new results file with its header; refuses to overwrite one.
    pub fn create(path: &Path, header: &Header) -> Result<ResultsFile> {
        if path.exists() {
            bail!(
                "{} already exists: --resume continues that match, or choose another --out",
                path.display()
            );
        }
        let line = serde_json::to_string(header)? + "\n";
        crate::paths::write_atomically(path, line.as_bytes())?;
        Self::open_append(path)
    }

    /// Opens an existing results file to continue it: a torn last line is cut off.
    pub fn resume(path: &Path) -> Result<(ResultsFile, Header, Vec<GameRecord>)> {
        let (header, games, whole_len) = read(path)?;
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        file.set_len(whole_len)
            .with_context(|| format!("cutting the torn last line of {}", path.display()))?;
        drop(file);
        Ok((Self::open_append(path)?, header, games))
    }

    fn open_append(path: &Path) -> Result<ResultsFile> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        Ok(ResultsFile {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn append(&mut self, game: &GameRecord) -> Result<()> {
        let line = serde_json::to_string(game)? + "\n";
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data())
            .with_context(|| format!("appending to {}", self.path.display()))
    }
}

/// Reads a results file: its header, its games, and the length of its whole lines (a torn
/// last line is not counted).
pub fn read(path: &Path) -> Result<(Header, Vec<GameRecord>, u64)> {
    let bytes = crate::input::read_bytes(path, crate::input::RESULTS)?;
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let text = std::str::from_utf8(&bytes[..whole])
        .with_context(|| format!("{} is not UTF-8 text", path.display()))?;
    let mut lines = text.lines().enumerate();
    let header: Header = match lines.next() {
        Some((_, line)) => serde_json::from_str(line)
            .with_context(|| format!("{}:1: not a lab match results header", path.display()))?,
        None => bail!("{} is empty: not a lab match results file", path.display()),
    };
    if header.kind != RESULTS_KIND || header.schema_version != RESULTS_SCHEMA_VERSION {
        bail!(
            "{}: kind `{}` schema {} is not a lab match results file (expected `{RESULTS_KIND}` schema {RESULTS_SCHEMA_VERSION})",
            path.display(),
            header.kind,
            header.schema_version
        );
    }
    let mut games: Vec<GameRecord> = Vec::new();
    let mut seen = BTreeMap::new();
    for (index, line) in lines {
        let game: GameRecord = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not a game record", path.display(), index + 1))?;
        if !header.shard.owns(game.id.pair) {
            bail!(
                "{}:{}: pair {} does not belong to shard {}/{}",
                path.display(),
                index + 1,
                game.id.pair,
                header.shard.index,
                header.shard.count
            );
        }
        if let Some(first) = seen.insert(game.id, index + 1) {
            bail!(
                "{}:{}: pair {} game {} was already recorded on line {first}",
                path.display(),
                index + 1,
                game.id.pair,
                game.id.game
            );
        }
        games.push(game);
    }
    Ok((header, games, whole as u64))
}

/// The settings fields in which `other` differs from `base`, by name (`engines[B].binary`,
/// `limits[A]`, ...): empty when the two describe the same match.
pub fn differences(base: &MatchSettings, other: &MatchSettings) -> Vec<String> {
    let (Ok(base), Ok(other)) = (serde_json::to_value(base), serde_json::to_value(other)) else {
        return vec!["settings (unreadable)".to_string()];
    };
    let mut names = Vec::new();
    let empty = serde_json::Map::new();
    let base_fields = base.as_object().unwrap_or(&empty);
    let other_fields = other.as_object().unwrap_or(&empty);
    for (key, value) in base_fields {
        let theirs = other_fields.get(key);
        if key == "limits" {
            for (index, label) in ["A", "B"].iter().enumerate() {
                if value.get(index) != theirs.and_then(|t| t.get(index)) {
                    names.push(format!("limits[{label}]"));
                }
            }
        } else if key == "engines" {
            for (index, label) in ["A", "B"].iter().enumerate() {
                let mine = value.get(index);
                let theirs = theirs.and_then(|t| t.get(index));
                for field in ["spec", "binary", "options", "commit", "name"] {
                    if mine.and_then(|m| m.get(field)) != theirs.and_then(|t| t.get(field)) {
                        names.push(format!("engines[{label}].{field}"));
                    }
                }
            }
        } else if Some(value) != theirs {
            names.push(key.clone());
        }
    }
    names
}

/// Game pairs among `games` with both games played.
pub fn complete_pairs(games: &[GameRecord]) -> BTreeMap<u64, [Option<&GameRecord>; 2]> {
    let mut pairs: BTreeMap<u64, [Option<&GameRecord>; 2]> = BTreeMap::new();
    for game in games {
        pairs.entry(game.id.pair).or_default()[usize::from(game.id.game.min(1))] = Some(game);
    }
    pairs.retain(|_, pair| pair.iter().all(Option::is_some));
    pairs
}

/// The ids of the games the shard plays out of a budget of `games` games.
pub fn schedule(games: u64, shard: Shard) -> Vec<GameId> {
    (0..games / 2)
        .filter(|&pair| shard.owns(pair))
        .flat_map(|pair| [GameId { pair, game: 0 }, GameId { pair, game: 1 }])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header line as results files were written when both sides shared one `limit`.
    const ONE_LIMIT_HEADER: &str = r#"{"kind":"lab-match-results","schema_version":1,"shard":{"index":1,"count":1},"settings":{"engines":[{"spec":"HEAD","name":"squall A","binary":"k1","commit":"c1","options":[]},{"spec":"HEAD","name":"squall B","binary":"k1","commit":"c1","options":[["Hash","16"]]}],"limit":{"kind":"nodes","nodes":5000},"book":{"source":"built-in","digest":"d","openings":2000,"plies":null},"seed":1,"draw_adjudication":null,"resign_adjudication":null,"timemargin_ms":0,"games":100,"sprt":null,"elo_model":"logistic"}}"#;

    #[test]
    fn a_header_with_one_limit_reads_as_both_sides_limit_and_resumes_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.jsonl");
        std::fs::write(&path, format!("{ONE_LIMIT_HEADER}\n")).unwrap();
        let (header, games, _) = read(&path).unwrap();
        assert!(games.is_empty());
        let nodes = super::super::rules::Limit::Nodes { nodes: 5000 };
        assert_eq!(header.settings.limits, [nodes; 2]);
        // The same match today: nothing differs, so --resume and merge accept it.
        let mut today = header.settings.clone();
        today.limits = [nodes; 2];
        assert!(differences(&header.settings, &today).is_empty());
        // B on a limit of its own is another match, named by side.
        today.limits[1] = super::super::rules::Limit::Nodes { nodes: 10_000 };
        assert_eq!(differences(&header.settings, &today), ["limits[B]"]);
        // Written again, the header holds both sides' limits.
        let line = serde_json::to_string(&Header::new(today, Shard::WHOLE)).unwrap();
        assert!(
            line.contains(
                r#""limits":[{"kind":"nodes","nodes":5000},{"kind":"nodes","nodes":10000}]"#
            ),
            "{line}"
        );
    }

    #[test]
    fn shards_split_the_pairs_without_overlap() {
        assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
        for bad in ["0/4", "5/4", "4", "a/b", "1/0"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        let whole = schedule(40, Shard::WHOLE);
        let mut pooled: Vec<GameId> = (1..=4)
            .flat_map(|index| schedule(40, Shard { index, count: 4 }))
            .collect();
        pooled.sort();
        assert_eq!(pooled, whole);
        assert_eq!(whole.len(), 40);
    }
}
