//! The results file of a match: one JSON object a line, a header with everything that decides
//! the games, then one line per finished game, appended and flushed as the game ends. It is
//! what `--resume` continues and what `lab match merge` pools; the PGN is derived from it.
//!
//! A line is written with a single `write`, so an interrupted lab leaves at most a torn last
//! line, which readers ignore and `--resume` cuts off. A match holds an advisory lock on its
//! results file while it writes it, so no second run appends to the same file: a new file
//! appears under its name already locked, with its header (never replacing a file), and
//! `--resume` refuses a file another run holds.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::book::BookIdentity;
use super::game::{GameId, GameRecord};
use super::rules::{
    one_or_per_side, AdjudicationRules, DrawAdjudication, ResignAdjudication, RulesKept, SideLimits,
};
use super::sprt::{EloModel, Sprt};
use crate::machine::Provenance;
use crate::paths::{locked_by, try_lock_exclusive};

pub(crate) const RESULTS_KIND: &str = "lab-match-results";
pub(crate) const RESULTS_SCHEMA_VERSION: u32 = 1;
/// The largest results file the lab reads: a 40 000-game match takes about 100 MB.
pub(crate) const MAX_RESULTS_BYTES: u64 = 1 << 30;
/// The most numbered names tried for a new results file before giving up.
const MAX_NUMBERED_NAMES: u32 = 10_000;

/// Who plays: enough to tell whether two results files played the same engines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Contestant {
    /// As given: a revision (`HEAD`, `WORKTREE`, a SHA) or `exe:PATH`.
    pub(crate) spec: String,
    /// The PGN name.
    pub(crate) name: String,
    /// The build-cache key of a revision's binary, or the git blob id of an `exe:` binary.
    pub(crate) binary: String,
    /// The commit a revision resolved to.
    pub(crate) commit: Option<String>,
    /// `setoption` pairs sent at start-up (including Hash).
    pub(crate) options: Vec<(String, String)>,
    /// The process's arguments (`--engine-a "... args=..."`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) args: Vec<String>,
    /// The process's working directory (`dir=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) dir: Option<String>,
}

/// Everything that decides which games are played and how: two results files can be pooled
/// when these are equal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct MatchSettings {
    /// A, then B.
    pub(crate) engines: [Contestant; 2],
    /// A's limit, then B's; a file written before sides had limits of their own has one
    /// `limit`, read as both.
    #[serde(alias = "limit", deserialize_with = "one_or_per_side")]
    pub(crate) limits: SideLimits,
    pub(crate) book: BookIdentity,
    pub(crate) seed: u64,
    pub(crate) draw_adjudication: Option<DrawAdjudication>,
    pub(crate) resign_adjudication: Option<ResignAdjudication>,
    pub(crate) timemargin_ms: u64,
    /// The game budget of the whole match (all shards).
    pub(crate) games: u64,
    pub(crate) sprt: Option<Sprt>,
    pub(crate) elo_model: EloModel,
    /// `--maxmoves`: a draw once each side has played this many moves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_moves: Option<u32>,
    /// `--scale-nps`: the reference NPS the clocks were scaled to (each file records its own
    /// factor in its header, since shards may run on machines of different speeds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scale_nps: Option<u64>,
}

impl MatchSettings {
    /// The draw and resign rules the games are adjudicated by.
    pub(crate) fn adjudication(&self) -> AdjudicationRules {
        AdjudicationRules {
            draw: self.draw_adjudication,
            resign: self.resign_adjudication,
        }
    }
}

/// How this file's clocks were scaled (`--scale-nps`), as OpenBench's `scale_time_control`:
/// both clocks times `reference_nps / measured_nps`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct NpsScale {
    pub(crate) reference_nps: u64,
    /// A's `bench` NPS on this machine, the mean of as many runs at once as the match plays games.
    pub(crate) measured_nps: u64,
    pub(crate) factor: f64,
}

impl NpsScale {
    /// The scaling of `reference_nps` against `measured_nps`.
    pub(crate) fn new(reference_nps: u64, measured_nps: u64) -> Result<NpsScale> {
        if reference_nps == 0 || measured_nps == 0 {
            bail!("--scale-nps: a speed of 0 nodes per second scales nothing");
        }
        Ok(NpsScale {
            reference_nps,
            measured_nps,
            factor: reference_nps as f64 / measured_nps as f64,
        })
    }
}

/// Shard I of N plays the pairs whose index is I-1 modulo N.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Shard {
    pub(crate) index: u32,
    pub(crate) count: u32,
}

impl Shard {
    pub(crate) const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// `I/N` with 1 ≤ I ≤ N.
    pub(crate) fn parse(spec: &str) -> Result<Shard> {
        let parsed = spec.split_once('/').and_then(|(i, n)| {
            let (index, count) = (i.trim().parse().ok()?, n.trim().parse().ok()?);
            (1..=count)
                .contains(&index)
                .then_some(Shard { index, count })
        });
        parsed.with_context(|| format!("--shard {spec}: expected I/N with 1 <= I <= N, e.g. 2/4"))
    }

    pub(crate) fn owns(self, pair: u64) -> bool {
        pair % u64::from(self.count) == u64::from(self.index - 1)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub(crate) kind: String,
    pub(crate) schema_version: u32,
    pub(crate) shard: Shard,
    pub(crate) settings: MatchSettings,
    /// The clocks' scaling on the machine that wrote this file (`--scale-nps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) nps_scale: Option<NpsScale>,
    /// The machine the file's games are played on and when the file was started
    /// (`measured_unix`), so that a merge of shards names where and when they ran. Not part
    /// of the settings: shards of one match may run on different machines. `None` in a file
    /// from a lab that did not record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) started: Option<Provenance>,
}

impl Header {
    /// The header of a results file started now, on this machine.
    pub(crate) fn new(
        settings: MatchSettings,
        shard: Shard,
        nps_scale: Option<NpsScale>,
    ) -> Header {
        Header {
            kind: RESULTS_KIND.to_string(),
            schema_version: RESULTS_SCHEMA_VERSION,
            shard,
            settings,
            nps_scale,
            started: Some(Provenance::here_now()),
        }
    }
}

/// A results file open for appending games, locked until dropped.
pub(crate) struct ResultsFile {
    path: PathBuf,
    file: File,
}

impl ResultsFile {
    /// Starts a new results file with its header; refuses a path that exists.
    pub(crate) fn create(path: &Path, header: &Header) -> Result<ResultsFile> {
        Self::create_with(path, &header_line(header)?)
    }

    fn create_with(path: &Path, header_line: &str) -> Result<ResultsFile> {
        if let Some(file) = Self::try_create(path, header_line)? {
            return Ok(file);
        }
        match locked_by(path) {
            Some(holder) => bail!(
                "{} already exists and is in use by {holder}: another match is writing it; choose another --out",
                path.display()
            ),
            None => bail!(
                "{} already exists: --resume continues that match, or choose another --out",
                path.display()
            ),
        }
    }

    /// Starts a new results file `STEM.jsonl` in `dir`, or `STEM-2.jsonl`, `STEM-3.jsonl`, ...:
    /// the first name that no file takes, whose PGN (`.pgn` beside it) does not exist either,
    /// and that `reserved` does not claim.
    pub(crate) fn create_numbered(
        dir: &Path,
        stem: &str,
        header: &Header,
        reserved: impl Fn(&Path) -> bool,
    ) -> Result<ResultsFile> {
        Self::create_numbered_with(dir, stem, &header_line(header)?, reserved)
    }

    fn create_numbered_with(
        dir: &Path,
        stem: &str,
        header_line: &str,
        reserved: impl Fn(&Path) -> bool,
    ) -> Result<ResultsFile> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for number in 1..=MAX_NUMBERED_NAMES {
            let name = if number == 1 {
                format!("{stem}.jsonl")
            } else {
                format!("{stem}-{number}.jsonl")
            };
            let path = dir.join(name);
            if path.with_extension("pgn").exists() || reserved(&path) {
                continue;
            }
            if let Some(file) = Self::try_create(&path, header_line)? {
                return Ok(file);
            }
        }
        bail!(
            "{}: {MAX_NUMBERED_NAMES} results files named {stem}* already; choose a name with --out",
            dir.display()
        )
    }

    /// The file with its header, written and locked under a temporary name, then linked to
    /// `path` only if nothing is there: `None` when the name is taken.
    fn try_create(path: &Path, header_line: &str) -> Result<Option<ResultsFile>> {
        let mut temporary = locked_temporary_beside(path)?;
        temporary
            .write_all(header_line.as_bytes())
            .and_then(|()| temporary.as_file().sync_data())
            .with_context(|| format!("writing {}", path.display()))?;
        match temporary.persist_noclobber(path) {
            Ok(file) => Ok(Some(ResultsFile {
                path: path.to_path_buf(),
                file,
            })),
            Err(error) if error.error.kind() == ErrorKind::AlreadyExists => Ok(None),
            Err(error) => Err(error.error).with_context(|| format!("writing {}", path.display())),
        }
    }

    /// Opens an existing results file to continue it, locked against any other writer: a torn
    /// last line is cut off.
    pub(crate) fn resume(path: &Path) -> Result<(ResultsFile, Header, Vec<GameRecord>)> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        try_lock_exclusive(&file, path)?;
        // A resume that changed the budget renames a rewritten file over this name: a handle
        // opened just before that holds the old file, whose games would be lost.
        if !names_this_file(path, &file) {
            bail!(
                "{} was replaced while this run opened it (another run resumed it): run again",
                path.display()
            );
        }
        // Read through the locked handle: what another run appended before it let go is seen.
        let bytes = read_bounded(&mut file, path)?;
        let (header, games, whole_len) = parse(&bytes, path)?;
        file.set_len(whole_len)
            .and_then(|()| file.seek(SeekFrom::End(0)))
            .with_context(|| format!("cutting the torn last line of {}", path.display()))?;
        Ok((
            ResultsFile {
                path: path.to_path_buf(),
                file,
            },
            header,
            games,
        ))
    }

    /// Writes `header` in place of the file's header, the games' lines byte for byte after it:
    /// the whole file under a temporary name, locked, then renamed over this one, so a reader
    /// sees the old file or the new one, never a mix. How a resume changes the game budget.
    pub(crate) fn replace_header(&mut self, header: &Header) -> Result<()> {
        self.file
            .seek(SeekFrom::Start(0))
            .with_context(|| format!("reading {}", self.path.display()))?;
        let bytes = read_bounded(&mut self.file, &self.path)?;
        // The header is the first line with text (readers skip blank lines).
        let first_text = bytes
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(bytes.len());
        let games_start = bytes[first_text..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |end| first_text + end + 1);
        let mut temporary = locked_temporary_beside(&self.path)?;
        temporary
            .write_all(header_line(header)?.as_bytes())
            .and_then(|()| temporary.write_all(&bytes[games_start..]))
            .and_then(|()| temporary.as_file().sync_data())
            .with_context(|| format!("writing {}", self.path.display()))?;
        let mut file = temporary
            .persist(&self.path)
            .map_err(|error| error.error)
            .with_context(|| format!("writing {}", self.path.display()))?;
        file.seek(SeekFrom::End(0))
            .with_context(|| format!("writing {}", self.path.display()))?;
        // The old handle, and with it the old file's lock, goes only now that the name holds
        // the new file, locked.
        self.file = file;
        Ok(())
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Removes a file this run created and has written no game to (its match could not start).
    pub(crate) fn discard(self) -> Result<()> {
        crate::paths::remove_if_exists(&self.path)
    }

    pub(crate) fn append(&mut self, game: &GameRecord) -> Result<()> {
        let line = serde_json::to_string(game)? + "\n";
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data())
            .with_context(|| format!("appending to {}", self.path.display()))
    }
}

/// The first line of a results file.
fn header_line(header: &Header) -> Result<String> {
    Ok(serde_json::to_string(header)? + "\n")
}

/// A new file in `path`'s directory (created if need be) under a hidden temporary name, locked
/// as `path` would be: written there, then renamed to `path`.
fn locked_temporary_beside(path: &Path) -> Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| format!("cannot write {}", path.display()))?;
    try_lock_exclusive(temporary.as_file(), path)?;
    Ok(temporary)
}

/// Whether `path` names the file `file` is open on (the same device and inode).
fn names_this_file(path: &Path, file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(path), file.metadata()) {
        (Ok(named), Ok(open)) => named.dev() == open.dev() && named.ino() == open.ino(),
        _ => false,
    }
}

/// At most [`MAX_RESULTS_BYTES`] of a regular file.
fn read_bounded(file: &mut File, path: &Path) -> Result<Vec<u8>> {
    let meta = file
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?;
    if !meta.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    let mut bytes = Vec::new();
    file.take(MAX_RESULTS_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {}", path.display()))?;
    if bytes.len() as u64 > MAX_RESULTS_BYTES {
        bail!(
            "{} is larger than {} MB: not a lab match results file",
            path.display(),
            MAX_RESULTS_BYTES >> 20
        );
    }
    Ok(bytes)
}

/// Reads a results file: its header, its games, and the length of its whole lines (a torn
/// last line is not counted).
pub fn read(path: &Path) -> Result<(Header, Vec<GameRecord>, u64)> {
    let bytes = crate::input::read_bytes(path, crate::input::RESULTS)?;
    parse(&bytes, path)
}

/// The newest results file under `dir` (by modification time) whose header `accept` takes,
/// with what it took; and how many results files `accept` did not take or could not be read.
pub(crate) fn newest<T>(
    dir: &Path,
    accept: impl Fn(&Header) -> Option<T>,
) -> (Option<(PathBuf, T)>, usize) {
    let mut taken = Vec::new();
    let mut others = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|ext| ext != "jsonl") {
            continue;
        }
        match read(&path).ok().and_then(|(header, _, _)| accept(&header)) {
            Some(value) => {
                let modified = entry.metadata().and_then(|meta| meta.modified()).ok();
                taken.push((modified, path, value));
            }
            None => others += 1,
        }
    }
    taken.sort_by(|x, y| (x.0, &x.1).cmp(&(y.0, &y.1)));
    (taken.pop().map(|(_, path, value)| (path, value)), others)
}

/// The header and games of a results file's bytes (`path` names it in errors). Blank lines are
/// skipped; every game must be one the header's schedule plays, once.
pub fn parse(bytes: &[u8], path: &Path) -> Result<(Header, Vec<GameRecord>, u64)> {
    let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let text = std::str::from_utf8(&bytes[..whole])
        .with_context(|| format!("{} is not UTF-8 text", path.display()))?;
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line))
        .filter(|(_, line)| !line.trim().is_empty());
    let header: Header = match lines.next() {
        Some((number, line)) => serde_json::from_str(line).with_context(|| {
            format!(
                "{}:{number}: not a lab match results header",
                path.display()
            )
        })?,
        None if bytes.iter().all(u8::is_ascii_whitespace) => {
            bail!("{} is empty: not a lab match results file", path.display())
        }
        None => bail!(
            "{} has no complete line (no newline in {} bytes): not a lab match results file",
            path.display(),
            bytes.len()
        ),
    };
    if header.kind != RESULTS_KIND || header.schema_version != RESULTS_SCHEMA_VERSION {
        bail!(
            "{}: kind `{}` schema {} is not a lab match results file (expected `{RESULTS_KIND}` schema {RESULTS_SCHEMA_VERSION})",
            path.display(),
            header.kind,
            header.schema_version
        );
    }
    let shard = header.shard;
    if shard.count == 0 || !(1..=shard.count).contains(&shard.index) {
        bail!(
            "{}: shard {}/{} in the header: expected I/N with 1 <= I <= N",
            path.display(),
            shard.index,
            shard.count
        );
    }
    // The clocks a resume plays are scaled by this factor: it must be the one the settings ask
    // for, from two real speeds.
    if let Some(scale) = header.nps_scale {
        if header.settings.scale_nps != Some(scale.reference_nps) {
            bail!(
                "{}: the header scales the clocks to {} NPS, but its settings ask for {}",
                path.display(),
                scale.reference_nps,
                header
                    .settings
                    .scale_nps
                    .map_or("no scaling".to_string(), |nps| format!("{nps} NPS"))
            );
        }
        let expected = NpsScale::new(scale.reference_nps, scale.measured_nps)
            .with_context(|| format!("{}: the header's clock scaling", path.display()))?;
        // JSON carries the factor to within a rounding of its last digit.
        let close = (scale.factor - expected.factor).abs() <= expected.factor * 1e-12;
        if !close {
            bail!(
                "{}: the header's clock factor {} is not {} NPS over {} NPS",
                path.display(),
                scale.factor,
                scale.reference_nps,
                scale.measured_nps
            );
        }
    }
    let pairs = header.settings.games / 2;
    let mut games: Vec<GameRecord> = Vec::new();
    let mut seen = BTreeMap::new();
    for (number, line) in lines {
        let game: GameRecord = serde_json::from_str(line)
            .with_context(|| format!("{}:{number}: not a game record", path.display()))?;
        let GameId { pair, game: index } = game.id;
        if index > 1 {
            bail!(
                "{}:{number}: pair {pair} game {index}: a pair has games 0 and 1 only",
                path.display()
            );
        }
        if pair >= pairs {
            let scheduled = match pairs {
                0 => "no pair".to_string(),
                _ => format!("pairs 0 to {}", pairs - 1),
            };
            bail!(
                "{}:{number}: pair {pair} is outside the schedule: a budget of {} games plays {scheduled}",
                path.display(),
                header.settings.games,
            );
        }
        if !shard.owns(pair) {
            bail!(
                "{}:{number}: pair {pair} does not belong to shard {}/{}",
                path.display(),
                shard.index,
                shard.count
            );
        }
        if let Some(first) = seen.insert(game.id, number) {
            bail!(
                "{}:{number}: pair {pair} game {index} was already recorded on line {first}",
                path.display(),
            );
        }
        games.push(game);
    }
    Ok((header, games, whole as u64))
}

/// The settings fields in which `other` differs from `base`, by name (`engines[B].binary`,
/// `limits[A]`, ...): empty when the two describe the same match.
pub(crate) fn differences(base: &MatchSettings, other: &MatchSettings) -> Vec<String> {
    let (Ok(base), Ok(other)) = (serde_json::to_value(base), serde_json::to_value(other)) else {
        return vec!["settings (unreadable)".to_string()];
    };
    let mut names = Vec::new();
    let empty = serde_json::Map::new();
    let base_fields = base.as_object().unwrap_or(&empty);
    let other_fields = other.as_object().unwrap_or(&empty);
    // A setting only one side records (a newer one, absent from an older file) differs too.
    let keys: std::collections::BTreeSet<&String> =
        base_fields.keys().chain(other_fields.keys()).collect();
    for key in keys {
        let (value, theirs) = (
            &base_fields.get(key).cloned().unwrap_or_default(),
            other_fields.get(key),
        );
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
                for field in ["spec", "binary", "options", "commit", "name", "args", "dir"] {
                    if mine.and_then(|m| m.get(field)) != theirs.and_then(|t| t.get(field)) {
                        names.push(format!("engines[{label}].{field}"));
                    }
                }
            }
        } else if Some(value) != theirs {
            names.push(key.to_string());
        }
    }
    names
}

/// The settings a file resumed with new SPRT bounds may record otherwise (`lab verdict`'s
/// resume): the bounds, and how the same two binaries were named (a later commit that changed
/// only docs builds the same binary).
const BOUNDS_AND_NAMES: [&str; 7] = [
    "sprt",
    "engines[A].spec",
    "engines[A].commit",
    "engines[A].name",
    "engines[B].spec",
    "engines[B].commit",
    "engines[B].name",
];

/// Which settings a resumed file may record otherwise than this run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct MayDiffer {
    /// The SPRT bounds and the engines' names (the same binaries): `lab verdict` judging its
    /// games again at bounds shifted by a new speed, `lab speed-elo` resumed at a later commit.
    pub(crate) bounds_and_names: bool,
    /// The adjudication rules the resumed games then keep.
    pub(crate) rules_kept: RulesKept,
}

/// The settings that keep `other` from continuing the results file of `base`: [`differences`]
/// but for the game budget, which a resume may change (a pair's opening follows the seed and
/// its index, not the budget), and those `may_differ` lets differ.
pub(crate) fn resume_differences(
    base: &MatchSettings,
    other: &MatchSettings,
    may_differ: MayDiffer,
) -> Vec<String> {
    let mut names = differences(base, other);
    names.retain(|name| {
        let name = name.as_str();
        name != "games"
            && !(may_differ.bounds_and_names && BOUNDS_AND_NAMES.contains(&name))
            && !(may_differ.rules_kept.draw && name == "draw_adjudication")
            && !(may_differ.rules_kept.resign && name == "resign_adjudication")
    });
    names
}

/// Writes `sprt` into the header of the results file at `path`: the bounds its games were last
/// judged at, when that was after its last run (`lab verdict` judging interrupted games again
/// at the speed of all of them).
pub(crate) fn rewrite_bounds(path: &Path, sprt: Sprt) -> Result<()> {
    let (mut file, mut header, _) = ResultsFile::resume(path)?;
    if header.settings.sprt != Some(sprt) {
        header.settings.sprt = Some(sprt);
        file.replace_header(&header)?;
    }
    Ok(())
}

/// Game pairs among `games` with both games played.
pub(crate) fn complete_pairs(games: &[GameRecord]) -> BTreeMap<u64, [Option<&GameRecord>; 2]> {
    let mut pairs: BTreeMap<u64, [Option<&GameRecord>; 2]> = BTreeMap::new();
    for game in games {
        pairs.entry(game.id.pair).or_default()[usize::from(game.id.game.min(1))] = Some(game);
    }
    pairs.retain(|_, pair| pair.iter().all(Option::is_some));
    pairs
}

/// The ids of the games the shard plays out of a budget of `games` games.
pub(crate) fn schedule(games: u64, shard: Shard) -> Vec<GameId> {
    (0..games / 2)
        .filter(|&pair| shard.owns(pair))
        .flat_map(|pair| [GameId { pair, game: 0 }, GameId { pair, game: 1 }])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const REBOUNDED: MayDiffer = MayDiffer {
        bounds_and_names: true,
        rules_kept: RulesKept {
            draw: false,
            resign: false,
        },
    };

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
        let line = serde_json::to_string(&Header::new(today, Shard::WHOLE, None)).unwrap();
        assert!(
            line.contains(
                r#""limits":[{"kind":"nodes","nodes":5000},{"kind":"nodes","nodes":10000}]"#
            ),
            "{line}"
        );
    }

    /// Settings newer than a file (`--maxmoves`, `--scale-nps`, an engine's args and working
    /// directory) are absent from it: the file reads as played without them, and a match
    /// with them is another match, named by the setting, whichever side has it.
    #[test]
    fn settings_a_file_lacks_differ_by_name_from_either_side() {
        let old: Header = serde_json::from_str(ONE_LIMIT_HEADER).unwrap();
        assert_eq!(old.settings.max_moves, None);
        assert_eq!(old.nps_scale, None);
        let same = old.settings.clone();
        assert!(differences(&old.settings, &same).is_empty());
        let mut today = old.settings.clone();
        today.max_moves = Some(120);
        today.scale_nps = Some(1_000_000);
        today.engines[1].args = vec!["--fast".to_string()];
        today.engines[0].dir = Some("/engines".to_string());
        let expected = [
            "engines[A].dir",
            "engines[B].args",
            "max_moves",
            "scale_nps",
        ];
        assert_eq!(differences(&old.settings, &today), expected);
        assert_eq!(differences(&today, &old.settings), expected);
        let mut other = today.clone();
        other.max_moves = Some(200);
        assert_eq!(differences(&today, &other), ["max_moves"]);
        // Written and read back, the new settings survive.
        let line = serde_json::to_string(&Header::new(today.clone(), Shard::WHOLE, None)).unwrap();
        let back: Header = serde_json::from_str(&line).unwrap();
        assert!(differences(&back.settings, &today).is_empty());
    }

    /// A header's clock scaling is what a resume plays by: one its settings do not ask for, or a
    /// factor that is not the ratio of its speeds, is refused.
    #[test]
    fn a_header_scales_the_clocks_only_as_its_settings_and_speeds_say() {
        let old: Header = serde_json::from_str(ONE_LIMIT_HEADER).unwrap();
        let mut settings = old.settings.clone();
        settings.scale_nps = Some(1_000_000);
        let read = |header: &Header| {
            let line = format!("{}\n", serde_json::to_string(header).unwrap());
            parse(line.as_bytes(), Path::new("r.jsonl")).map(|(header, _, _)| header)
        };
        let scaled = NpsScale::new(1_000_000, 800_000).unwrap();
        let good = Header::new(settings.clone(), Shard::WHOLE, Some(scaled));
        assert_eq!(read(&good).unwrap().nps_scale, Some(scaled));
        let tiny = NpsScale {
            factor: 1e-9,
            ..scaled
        };
        let error = read(&Header::new(settings.clone(), Shard::WHOLE, Some(tiny))).unwrap_err();
        assert!(
            format!("{error:#}").contains("is not 1000000 NPS over 800000 NPS"),
            "{error:#}"
        );
        let zero = NpsScale {
            measured_nps: 0,
            ..scaled
        };
        let error = read(&Header::new(settings, Shard::WHOLE, Some(zero))).unwrap_err();
        assert!(
            format!("{error:#}").contains("a speed of 0 nodes per second"),
            "{error:#}"
        );
        let unasked = Header::new(old.settings.clone(), Shard::WHOLE, Some(scaled));
        let error = read(&unasked).unwrap_err();
        assert!(
            format!("{error:#}").contains("but its settings ask for no scaling"),
            "{error:#}"
        );
    }

    /// A verdict resumes the games of the same binaries whatever they were called and with
    /// bounds shifted anew; another binary is another match.
    #[test]
    fn a_rebounded_resume_ignores_bounds_and_names_but_not_binaries() {
        let old: Header = serde_json::from_str(ONE_LIMIT_HEADER).unwrap();
        let mut today = old.settings.clone();
        today.engines[0].spec = "main".to_string();
        today.engines[0].commit = Some("c2".to_string());
        today.engines[0].name = "squall A (c2)".to_string();
        today.engines[1].spec = "exp".to_string();
        today.sprt = Some(Sprt::new(3.0, 8.0, 0.05, 0.05, EloModel::Logistic).unwrap());
        assert_eq!(differences(&old.settings, &today).len(), 5);
        assert!(resume_differences(&old.settings, &today, REBOUNDED).is_empty());
        assert_eq!(
            resume_differences(&old.settings, &today, MayDiffer::default()).len(),
            5
        );
        today.engines[1].binary = "k2".to_string();
        today.limits[0] = super::super::rules::Limit::Nodes { nodes: 10_000 };
        assert_eq!(
            resume_differences(&old.settings, &today, REBOUNDED),
            ["engines[B].binary", "limits[A]"]
        );
    }

    /// Any resume may change the game budget; a merge of shards may not.
    #[test]
    fn a_resume_may_change_the_budget_and_nothing_else_unnamed() {
        let old: Header = serde_json::from_str(ONE_LIMIT_HEADER).unwrap();
        let mut today = old.settings.clone();
        today.limits = old.settings.limits;
        today.games = 1000;
        assert_eq!(differences(&old.settings, &today), ["games"]);
        assert!(resume_differences(&old.settings, &today, MayDiffer::default()).is_empty());
        today.seed = 2;
        assert_eq!(
            resume_differences(&old.settings, &today, MayDiffer::default()),
            ["seed"]
        );
        today.seed = old.settings.seed;
        today.draw_adjudication = Some(super::super::rules::DrawAdjudication {
            move_number: 32,
            move_count: 8,
            score: 10,
        });
        assert_eq!(
            resume_differences(&old.settings, &today, MayDiffer::default()),
            ["draw_adjudication"]
        );
        let draw_kept = MayDiffer {
            rules_kept: RulesKept {
                draw: true,
                resign: false,
            },
            ..MayDiffer::default()
        };
        assert!(resume_differences(&old.settings, &today, draw_kept).is_empty());
        today.resign_adjudication = Some(super::super::rules::ResignAdjudication {
            move_count: 3,
            score: 400,
        });
        assert_eq!(
            resume_differences(&old.settings, &today, draw_kept),
            ["resign_adjudication"]
        );
    }

    /// A new header goes in front of the games' lines, byte for byte, the file stays locked
    /// under its name, and appends go after the games.
    #[test]
    fn replacing_the_header_keeps_every_game_line_and_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        let game = r#"{"some":"game line","kept":"as written"}"#;
        std::fs::write(&path, format!("\n{ONE_LIMIT_HEADER}\n{game}\n")).unwrap();
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        try_lock_exclusive(&file, &path).unwrap();
        file.seek(SeekFrom::End(0)).unwrap();
        let mut results = ResultsFile {
            path: path.clone(),
            file,
        };
        let mut header: Header = serde_json::from_str(ONE_LIMIT_HEADER).unwrap();
        header.settings.games = 400;
        results.replace_header(&header).unwrap();
        results.file.write_all(b"{\"next\":1}\n").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        let back: Header = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(back.settings.games, 400);
        assert_eq!(lines[1], game);
        assert_eq!(lines[2], r#"{"next":1}"#);
        // The name holds the rewritten file, still locked against a second writer.
        assert!(locked_by(&path).is_some());
        assert!(names_this_file(&path, &results.file));
        // No temporary file is left beside it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// The newest accepted file by modification time, what `accept` took from it, and every
    /// other file counted: rejected, unreadable or not a results file.
    #[test]
    fn the_newest_accepted_results_file_is_found_and_the_others_counted() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str, age_s: u64| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            let modified = std::time::SystemTime::now() - std::time::Duration::from_secs(age_s);
            File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(modified)
                .unwrap();
        };
        let header = format!("{ONE_LIMIT_HEADER}\n");
        write("old.jsonl", &header, 300);
        write("new.jsonl", &header, 100);
        write(
            "newest-other.jsonl",
            &header.replace("\"k1\"", "\"k9\""),
            10,
        );
        write("broken.jsonl", "{not json\n", 0);
        write("notes.txt", "not a results file", 0);
        let (found, others) = newest(dir.path(), |header| {
            (header.settings.engines[0].binary == "k1").then_some(header.settings.games)
        });
        assert_eq!(found, Some((dir.path().join("new.jsonl"), 100)));
        assert_eq!(
            others, 2,
            "newest-other and broken (old was taken too, but is older)"
        );
        let (none, others) = newest(dir.path(), |_| None::<()>);
        assert_eq!((none, others), (None, 4));
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

    /// Choosing a free name and taking it are one step: two matches starting together cannot
    /// both pick the same name.
    #[test]
    fn numbered_results_files_are_taken_as_they_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let taken = |_: &Path| false;
        let first =
            ResultsFile::create_numbered_with(dir.path(), "a-vs-b", "one\n", taken).unwrap();
        let second =
            ResultsFile::create_numbered_with(dir.path(), "a-vs-b", "two\n", taken).unwrap();
        assert_eq!(first.path(), dir.path().join("a-vs-b.jsonl"));
        assert_eq!(second.path(), dir.path().join("a-vs-b-2.jsonl"));
        assert_eq!(std::fs::read_to_string(first.path()).unwrap(), "one\n");
        assert_eq!(std::fs::read_to_string(second.path()).unwrap(), "two\n");
        let refused = ResultsFile::create_with(first.path(), "three\n")
            .err()
            .unwrap()
            .to_string();
        assert!(
            refused.contains(&format!("in use by pid {}", std::process::id())),
            "{refused}"
        );
        assert_eq!(std::fs::read_to_string(first.path()).unwrap(), "one\n");
        let reserved = dir.path().join("a-vs-b-3.jsonl");
        let third =
            ResultsFile::create_numbered_with(dir.path(), "a-vs-b", "", |path| path == reserved)
                .unwrap();
        assert_eq!(third.path(), dir.path().join("a-vs-b-4.jsonl"));
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
