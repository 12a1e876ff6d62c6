//! Command-line surface. Kept declarative so `lab --help` is the reference for every option.

use std::path::PathBuf;

use crate::analysis::compare::Thresholds;
use crate::calibration::summary::DEFAULT_PERCENTILE;
use crate::games::rules::{DEFAULT_DRAW_ADJ, DEFAULT_RESIGN_ADJ};

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::report::Format;

pub(crate) const EXIT_CODES_HELP: &str = "\
Exit codes:
  0  no regression
  1  regression: the slowdown is significant (95% CI excludes no change) and beyond --threshold,
     or, with an unchanged signature, instructions per node grew by --instr-threshold or more
  2  error (bad revision, failed build, crashed or non-deterministic engine, bad baseline, ...)";

/// `lab --help`'s: compare's, and the codes only the games (match, verdict) give.
pub(crate) const LAB_EXIT_CODES_HELP: &str = "\
Exit codes (each command's own: lab COMMAND --help):
  0  no regression; match and verdict: H1 accepted (or a match without --sprt finished)
  1  regression: the slowdown is significant (95% CI excludes no change) and beyond --threshold,
     or, with an unchanged signature, instructions per node grew by --instr-threshold or more;
     match and verdict: H0 accepted
  2  error (bad revision, failed build, crashed or non-deterministic engine, bad baseline, ...)
  3  match and match merge: the game budget spent without an SPRT decision (merge: also files
     short of the budget); verdict: undecided
130  interrupted (SIGINT or SIGTERM): child processes ended; match and verdict first report the
     games so far (--resume plays the rest)
141  standard output closed before the report was written (its reader ended first)";

pub(crate) const BENCH_EXIT_CODES_HELP: &str = "\
Exit codes:
  0  measured (with --check-commit, the signature is the commit message's `Bench: N`)
  1  --check-commit: the signature differs from the commit message's `Bench: N`
  2  error (bad revision, failed build, crashed or non-deterministic engine, with --check-commit
     a message without `Bench: N` or a REV that is not a commit, ...)";

pub(crate) const TIERS_EXIT_CODES_HELP: &str = "\
Exit codes:
  0  neither rule of exit 1 holds: the tiers (B) do not make the engine slower than --full-eval (A)
  1  the tiers make the engine slower: time per node grew significantly (95% CI excludes no
     change) and beyond --threshold, or, where both ways search the same tree (an unchanged
     signature, rare: the tiers change the search), instructions per node grew by
     --instr-threshold or more
  2  error (bad revision, failed build, crashed or non-deterministic engine, an engine without
     eval tiers, ...)";

pub(crate) const MATCH_EXIT_CODES_HELP: &str = "\
Exit codes:
  0  SPRT accepted H1 (B is stronger by elo1 or more), or no --sprt and the match finished,
     or a shard (--shard) played its share (the SPRT is judged by `match merge`)
  1  SPRT accepted H0 (B is not stronger by elo1)
  2  error (bad option or book, failed build, an engine that faults game after game, ...)
  3  the game budget was spent without an SPRT decision; of `match merge`, also: its files hold
     fewer games than the budget and no decision (a shard missing, a match not finished); of a
     match, also: the games in play when the LLR crossed a bound brought it back (every
     recorded game counts; --resume plays on)
  130  interrupted (Ctrl-C, SIGTERM): the report of the games so far; --resume plays the rest";

pub(crate) const VERDICT_EXIT_CODES_HELP: &str = "\
Exit codes:
  0  H1 accepted. Same signature: the speed's Elo X with σ from its 95% interval has
     X − z(1−α)·σ ≥ elo0. Different signatures: the fixed-node games' LLR reached the upper
     bound (the bounds less the lower end of the speed's Elo interval; --node-odds: as given)
  1  H0 accepted. Same signature: X + z(1−β)·σ ≤ elo1. Different signatures: the games' LLR
     reached the lower bound. With the same signature and both rules met, the sign of
     2X − elo0 − elo1 chooses
  2  error (bad option, failed build, no speed-Elo model for this machine and clock, ...)
  3  undecided within --max-rounds (same signature) or --max-games (games), or a decision
     withheld because the games' own NPS contradicts the speed it rests on
130  interrupted (SIGINT or SIGTERM) during the games: the verdict of the games so far, its
     exports written, and no decision even if they are past a bound (a note says so);
     --resume continues the games";

pub(crate) const BISECT_EXIT_CODES_HELP: &str = "\
Exit codes:
  0  no regression: BAD is not beyond the threshold relative to GOOD
  1  a regression: the first commit beyond the threshold was found
  2  error (bad revision, GOOD not on BAD's first-parent line, failed build, no valgrind for
     --metric instructions, ...)";

/// Default of `lab verdict --max-games`.
pub(crate) const DEFAULT_MAX_GAMES: u64 = 20_000;
/// Default of `lab speed-elo --games` (per odds).
pub(crate) const DEFAULT_GAMES_PER_ODDS: u64 = 400;
/// Default of `baseline check --threshold`. Stored runs are not paired in time with fresh ones,
/// so the machine's drift between the two sittings is in the ratio and not in its interval: on
/// a small VM an unchanged binary can measure up to about 10% slower per node than its
/// baseline saved hours before. asv's `--factor` (1.1) makes a like allowance.
pub(crate) const DEFAULT_BASELINE_THRESHOLD_PCT: f64 = 15.0;

/// The heading of the options every command takes, listed apart from the command's own.
pub(crate) const GLOBAL_OPTIONS: &str = "Global options";

/// Parses the command line as [`Cli::try_parse`] does, with every option and positional that
/// takes a value accepting a negative number (`--threshold -1`): the lab's own check then
/// names what is wrong, where clap would call `-1` an unknown flag.
pub fn parse() -> Result<Cli, clap::Error> {
    parse_from(std::env::args_os())
}

/// [`parse`] over the given arguments (the first is the program's name).
pub(crate) fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut command = with_negative_numbers(Cli::command());
    let mut matches = command.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches_mut(&mut matches).map_err(|error| error.format(&mut command))
}

fn with_negative_numbers(command: clap::Command) -> clap::Command {
    command
        .mut_args(|arg| {
            if arg.get_action().takes_values() {
                arg.allow_negative_numbers(true)
            } else {
                arg
            }
        })
        .mut_subcommands(with_negative_numbers)
}

/// Squall Lab: performance-regression lab for the squall chess engine.
///
/// Builds the engine of any git revision (or the uncommitted WORKTREE) in a cache under
/// target/lab/, runs `squall bench --json` and reports the node signature, NPS with a
/// confidence interval over rounds, callgrind instruction counts and eval-exit rates.
#[derive(Debug, Parser)]
#[command(name = "lab", version, after_help = LAB_EXIT_CODES_HELP)]
pub struct Cli {
    /// Repository to operate on (default: discovered from the current directory).
    #[arg(long, global = true, value_name = "PATH", help_heading = GLOBAL_OPTIONS)]
    pub(crate) repo: Option<PathBuf>,

    /// The engine definition (default: the repository's lab.toml; without one, squall with its
    /// own bench protocol). Keys: docs/lab-toml.md.
    #[arg(long, global = true, value_name = "FILE", help_heading = GLOBAL_OPTIONS)]
    pub(crate) config: Option<PathBuf>,

    /// Print no progress lines, bars or notes (warnings and errors still print).
    #[arg(long, short, global = true, help_heading = GLOBAL_OPTIONS)]
    pub(crate) quiet: bool,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Compare two revisions: signature, NPS, instructions and eval exits.
    #[command(after_help = EXIT_CODES_HELP)]
    Compare(CompareArgs),
    /// Measure one revision.
    #[command(after_help = BENCH_EXIT_CODES_HELP, mut_arg("export_html", without_html))]
    Bench(BenchArgs),
    /// What the cheap eval tiers buy: one revision's binary with `--full-eval` (A) against
    /// the same binary with its tiers on (B), in paired ABBA rounds.
    ///
    /// Reports time per node with its confidence interval, NPS, instructions per node and the
    /// exits per tier and material bucket. The tiers change the search (QSearch futility reads
    /// their margins), so speed is compared per node. Exit 1 when the tiers make the engine
    /// significantly slower per node than the full evaluation alone.
    #[command(after_help = TIERS_EXIT_CODES_HELP)]
    Tiers(TiersArgs),
    /// Save, check or show a stored baseline (baselines/NAME.json).
    Baseline {
        #[command(subcommand)]
        action: BaselineCommand,
    },
    /// Calibration position pools (`lab pool generate`).
    Pool {
        #[command(subcommand)]
        action: PoolCommand,
    },
    /// Run the engine's calibration samplers over a position pool, or merge shard files.
    Calibrate(CalibrateArgs),
    /// Read any percentile out of a saved calibration file's histograms.
    Hist(HistArgs),
    /// Emit the engine's margin tables as Rust source from a saved calibration file.
    ///
    /// With --apply this rewrites the marked block of engine/src/eval/margins.rs in the
    /// repository's working tree: the one lab command that intentionally edits a source file.
    Tables(TablesArgs),
    /// Predict, with no search, what candidate margin tables do: replays a calibration's
    /// sampled evaluation calls (`--modes samples`) and reports each tier's exit share and the
    /// exceeded rate of its exits per material bucket, with Wilson 95% intervals and distinct
    /// positions; bench-weighted overall.
    ///
    /// `--search` picks the per-table, per-bucket percentiles that maximise the cheap exits
    /// while every exceeded rate's upper bound stays within --max-exceeded, and prints the
    /// `lab tables` command that writes them. Exit 0, or 2 on error.
    #[command(mut_arg("export_html", without_html))]
    Tune(TuneArgs),
    /// Play games between two engines and say which is stronger: W/D/L, pentanomial, Elo and
    /// nElo with 95% CIs, LOS, and an SPRT that stops the match once it decides.
    ///
    /// Each side is a git revision (built through the lab's cache, WORKTREE too) or
    /// `exe:PATH` for any UCI engine. A is the base, B the engine under test: every figure is
    /// B's. Each opening is played twice with colours swapped (a game pair). The lab referees
    /// every move (shakmaty) and runs the clock; a crash, hang, illegal move, garbage output or
    /// flag fall loses the game and is written into the PGN.
    #[command(after_help = MATCH_EXIT_CODES_HELP, args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Match(Box<MatchArgs>),
    /// Fit what speed is worth in Elo for one engine at one clock: self-play in which B has
    /// `odds ×` A's clock, Elo = k·log2(odds) fitted through the origin with a 95% CI.
    ///
    /// The model is stored under target/lab/speed-elo/, keyed by engine binary, time control
    /// and machine; `lab compare`, `lab tiers` and `lab verdict` read it. `--show` lists the
    /// stored models. Exit 0, or 2 on error.
    SpeedElo(SpeedEloArgs),
    /// One decision for speed and strength: is B at least as good as A at a time control?
    ///
    /// Measures A and B as `lab compare` does (signature, paired speed, instructions) and turns
    /// the speed change into Elo with the stored speed-Elo model (`lab speed-elo`). With the
    /// same signature no game is played: the speed's Elo is judged against the SPRT bounds,
    /// with more rounds while undecided. With different signatures, a fixed-node SPRT between
    /// A and B decides (nodes per move: A's NPS × its mean time per move in games against itself
    /// at the clock, kept for later verdicts of A), its bounds shifted by the speed's Elo, or
    /// with --node-odds B's budget carrying its speed. Prints search, speed and total Elo with
    /// 95% CIs.
    #[command(after_help = VERDICT_EXIT_CODES_HELP)]
    Verdict(VerdictCommandArgs),
    /// The margin tables' frontier: each level's worst exceeded bound (from its calibration)
    /// against its NPS gain and Elo (from its `lab verdict` against one reference A), and the
    /// Elo-optimal level. Reads JSON files only. Exit 0, or 2 on error.
    Frontier(FrontierArgs),
    /// Profile a revision's bench under pprof: flamegraph SVG and sample shares of key frames.
    ///
    /// Builds REV with `--features profile` and `-C force-frame-pointers=yes`, runs
    /// `squall profile`, writes the SVG (default target/lab/profile/<REV>.svg) and folded stacks
    /// beside it, and prints the profile run time and the share of samples in the eval tiers,
    /// the fixed-cost checks, move generation and the search. Exit 0, or 2 on error.
    #[command(mut_arg("export_html", without_html))]
    Profile(ProfileArgs),
    /// Measure each commit of a range A..B (first parents, oldest first) and print a table of
    /// signature, NPS, instructions per node and eval exits.
    ///
    /// Figures are stored per commit, machine, toolchain and settings (default
    /// target/lab/history/, see docs/history.md); a re-run measures only the commits the store
    /// lacks. Exit 0, or 2 on error.
    History(HistoryArgs),
    /// Find the first commit after GOOD, up to BAD along first parents, whose metric moved
    /// beyond the threshold relative to GOOD (binary search), and compare it with its parent.
    #[command(after_help = BISECT_EXIT_CODES_HELP, mut_arg("export_html", without_html))]
    Bisect(BisectArgs),
    /// Draw the HTML report (docs/html-report.md) of a stored JSON report: the `--format json`
    /// or `--export-json` output of compare, tiers, baseline check, match, calibrate, history,
    /// speed-elo, verdict or frontier, a calibration file (`lab calibrate --out`) or a stored
    /// speed-Elo model. Measures nothing.
    Report(ReportArgs),
}

#[derive(Debug, Args)]
#[command(mut_arg("rounds", |arg| arg.help(
    "NPS runs per commit, after one discarded warm-up run; the table shows their median"
)))]
pub(crate) struct HistoryArgs {
    /// The commits after A up to and including B (an empty end is HEAD), on B's first-parent line.
    pub(crate) range: String,
    /// Keep every Nth commit, counted back from B (B is always kept).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) every: u32,
    /// Keep only the newest K commits after --every.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max: Option<u32>,
    /// The store of measured commits (default: target/lab/history/); a directory you commit
    /// keeps a project's history.
    #[arg(long, value_name = "DIR")]
    pub(crate) store: Option<PathBuf>,
    /// Build and measure again the commits the store holds as failed points (a commit that did
    /// not build or measure is otherwise stored as failed and not tried again).
    #[arg(long)]
    pub(crate) retry_failed: bool,
    #[command(flatten)]
    pub(crate) measure: SeriesMeasureArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Args)]
#[command(mut_arg("rounds", |arg| arg.help(
    "ABBA rounds of each `--metric nps` probe (GOOD measured again beside it) and of the closing \
     `lab compare` of the commit found with its parent; probes of the other metrics run twice, \
     for the signature check"
)))]
pub(crate) struct BisectArgs {
    /// A commit without the regression.
    pub(crate) good: String,
    /// A commit with it, descending from GOOD along first parents.
    pub(crate) bad: String,
    /// What moved: instructions per node (callgrind), paired NPS, or the bench node count.
    #[arg(long, value_enum)]
    pub(crate) metric: MetricArg,
    /// Percent beyond which the metric counts as moved (default: compare's --instr-threshold
    /// for instructions, its --threshold for nps; the signature needs none).
    #[arg(long, value_parser = parse_threshold)]
    pub(crate) threshold: Option<f64>,
    #[command(flatten)]
    pub(crate) measure: SeriesMeasureArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum MetricArg {
    Instructions,
    Nps,
    Signature,
}

/// Measurement options of `history` and `bisect` (no --positions: a series benches the
/// engine's own list); the help of two options speaks of commits, and each command gives
/// --rounds its own.
#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("instr_depth", |arg| arg.help(
        "Bench depth of the callgrind run (a run at depth 1 is subtracted as start-up work)"
    )),
    mut_arg("timeout", |arg| arg.help(
        "Seconds a single bench run may take before it is killed (callgrind gets 20 times as \
         long)"
    ))
)]
pub(crate) struct SeriesMeasureArgs {
    #[command(flatten)]
    pub(crate) run: BenchRunArgs,
}

#[derive(Debug, Args)]
pub(crate) struct FrontierArgs {
    /// One level: a label, the `lab verdict A B --format json` report judging it against the
    /// reference A, and optionally its calibration (a calibration file or a `lab calibrate`
    /// JSON report with margin safety). Repeat for each level.
    #[arg(
        long = "point",
        required = true,
        value_name = "LABEL=VERDICT_JSON[,CALIBRATION_JSON]"
    )]
    pub(crate) points: Vec<String>,
    /// The verdicts' common A as a row of 0 Elo, with its calibration if given.
    #[arg(long, value_name = "LABEL[=CALIBRATION_JSON]")]
    pub(crate) reference: Option<String>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// The JSON report, or a calibration file.
    pub(crate) file: PathBuf,
    /// The HTML file to write (atomically).
    #[arg(long, value_name = "FILE.html")]
    pub(crate) out: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// Old revision (anything git understands, or WORKTREE).
    pub(crate) a: String,
    /// New revision (anything git understands, or WORKTREE).
    pub(crate) b: String,
    /// Measure A and B even when they resolve to the same engine binary (an explicit A/A
    /// run); without it, one line says so and nothing is measured (exit 0).
    #[arg(long)]
    pub(crate) force: bool,
    #[command(flatten)]
    pub(crate) measure: MeasureArgs,
    #[command(flatten)]
    pub(crate) thresholds: ThresholdArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
    #[command(flatten)]
    pub(crate) functions: FunctionsArgs,
    #[command(flatten)]
    pub(crate) calibration: CompareCalibrationArgs,
}

#[derive(Debug, Clone, Copy, Args)]
pub(crate) struct FunctionsArgs {
    /// Also count instructions per function under callgrind (one more run per revision at
    /// --instr-depth) and list the functions whose cost moved most.
    #[arg(long)]
    pub(crate) functions: bool,
    /// How many top movers --functions lists.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub(crate) functions_top: usize,
}

#[derive(Debug, Args)]
pub(crate) struct ProfileArgs {
    /// Revision to profile (anything git understands, or WORKTREE).
    #[arg(default_value = "HEAD")]
    pub(crate) rev: String,
    /// Bench depth (default: the engine's own bench depth).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) depth: Option<u32>,
    /// Flamegraph SVG of REV (default: target/lab/profile/<REV>.svg); folded stacks go beside
    /// it as .folded.
    #[arg(long, value_name = "FILE.svg")]
    pub(crate) out: Option<PathBuf>,
    /// Also profile REV_B, print both revisions' shares with their deltas, and draw the
    /// differential flamegraph <REV>-vs-<REV_B>.diff.svg beside REV's (red: B's share grew).
    #[arg(long, value_name = "REV_B")]
    pub(crate) vs: Option<String>,
    /// Samples per second (the kernel's timer tick may cap it, often at 250).
    #[arg(long, default_value_t = 997, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub(crate) frequency: u32,
    /// Seconds the profiled bench may take before it is killed with every process it started.
    #[arg(long, default_value_t = 600, value_parser = timeout_seconds())]
    pub(crate) timeout: u64,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Args)]
pub(crate) struct TiersArgs {
    /// Revision whose binary is measured both ways (anything git understands, or WORKTREE).
    #[arg(default_value = "HEAD")]
    pub(crate) rev: String,
    #[command(flatten)]
    pub(crate) measure: MeasureArgs,
    #[command(flatten)]
    pub(crate) thresholds: ThresholdArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// Revision to measure (anything git understands, or WORKTREE).
    #[arg(default_value = "HEAD")]
    pub(crate) rev: String,
    /// Compare the signature with the last `Bench: N` of the commit message (OpenBench's
    /// convention): exit 1 on a mismatch, naming both numbers.
    #[arg(long)]
    pub(crate) check_commit: bool,
    #[command(flatten)]
    pub(crate) measure: MeasureArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum BaselineCommand {
    /// Measure a revision and store the figures as baselines/NAME.json.
    // A baseline is the engine's own bench, so the positions options are refused here.
    #[command(mut_arg("positions", |arg| arg.hide(true)), mut_arg("every", |arg| arg.hide(true)))]
    Save {
        name: String,
        /// Revision to measure.
        #[arg(long, default_value = "HEAD")]
        rev: String,
        #[command(flatten)]
        measure: MeasureArgs,
    },
    /// Compare a revision with a stored baseline (same exit codes as `compare`).
    #[command(after_help = EXIT_CODES_HELP)]
    Check {
        name: String,
        /// Revision to measure.
        #[arg(long, default_value = "HEAD")]
        rev: String,
        /// NPS runs of the revision (default: as many as the baseline has).
        #[arg(long, value_parser = clap::value_parser!(u32).range(2..=10_000))]
        rounds: Option<u32>,
        /// Skip the callgrind instruction count.
        #[arg(long)]
        no_instructions: bool,
        /// Seconds a single bench run may take before it is killed with every process it started.
        #[arg(long, default_value_t = 300, value_parser = timeout_seconds())]
        timeout: u64,
        /// Smallest slowdown, in percent of time per node, that counts as a regression. Wider
        /// than compare's: the stored runs were measured at another time, in a machine state
        /// (load, frequency, neighbours on a VM) the interval cannot see. `lab compare` of the
        /// baseline's revision pairs both in time and judges smaller changes.
        #[arg(long, default_value_t = DEFAULT_BASELINE_THRESHOLD_PCT, value_parser = parse_threshold)]
        threshold: f64,
        /// Smallest change of instructions per node, in percent, that is flagged.
        #[arg(long, default_value_t = Thresholds::DEFAULT.instr_threshold_pct, value_parser = parse_threshold)]
        instr_threshold: f64,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Print a stored baseline.
    #[command(mut_arg("export_html", without_html))]
    Show {
        name: String,
        #[command(flatten)]
        output: OutputArgs,
    },
}

/// The bench runs of a measurement: rounds, depths, features and each run's time limit.
#[derive(Debug, Clone, Args)]
pub(crate) struct BenchRunArgs {
    /// Measurement rounds. `compare` runs each round as a pair, alternating A B, B A, ...
    /// (ABBA order); `bench` and `baseline save` run the binary once per round. The speed
    /// interval takes the rounds as its sample: below 4 it is too wide to detect much (a
    /// warning says so).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(2..=10_000))]
    pub(crate) rounds: u32,
    /// Bench depth for the signature and NPS runs (default: the engine's own default).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) depth: Option<u32>,
    /// Bench depth of the callgrind run per binary (a second run at depth 1 measures start-up
    /// work, which is subtracted from the per-node figure).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) instr_depth: u32,
    /// Skip the callgrind instruction count.
    #[arg(long)]
    pub(crate) no_instructions: bool,
    /// Extra cargo features to build the engine with (comma-separated or repeated).
    #[arg(long, value_delimiter = ',')]
    pub(crate) features: Vec<String>,
    /// Seconds a single bench run may take before it is killed with every process it started
    /// (callgrind gets 20 times as long).
    #[arg(long, default_value_t = 300, value_parser = timeout_seconds())]
    pub(crate) timeout: u64,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct MeasureArgs {
    #[command(flatten)]
    pub(crate) run: BenchRunArgs,
    /// Bench these positions instead of the engine's built-in list: one FEN or EPD per line,
    /// or a .gz of such lines (a calibration pool works). Every line is checked first; a bad
    /// one is reported with its number.
    #[arg(long, value_name = "FILE")]
    pub(crate) positions: Option<PathBuf>,
    /// With --positions: bench every Nth position of the file (1: all of them).
    #[arg(long, value_name = "N", requires = "positions", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) every: Option<u32>,
}

#[derive(Debug, Args)]
pub(crate) struct SpeedEloArgs {
    /// The revision (or `exe:PATH`) to fit the model for.
    #[arg(required_unless_present = "show")]
    pub(crate) rev: Option<String>,
    /// A's clock, BASE+INC in seconds; B gets odds × it (base and increment alike).
    #[arg(long, value_name = "BASE+INC", required_unless_present = "show")]
    pub(crate) tc: Option<String>,
    /// The time odds to play, comma-separated: each above 0 and not 1.
    #[arg(long, value_delimiter = ',', default_value = "2")]
    pub(crate) odds: Vec<f64>,
    /// Games per odds (even: each opening is a pair); default 400. With --resume, the budget
    /// of each odds' results file becomes this one (without it, the file's own is kept).
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..=1_000_000))]
    pub(crate) games: Option<u64>,
    /// Games played at once (default: the number of cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) concurrency: Option<u32>,
    /// Continue an interrupted run with the same arguments: each odds continues its newest
    /// results file with these settings and the same engine binary (under any name), and an
    /// odds not yet begun starts.
    #[arg(long)]
    pub(crate) resume: bool,
    /// The games' draw adjudication, movenumber=N,movecount=N,score=CP or none. Default:
    /// `lab match`'s (movenumber=32,movecount=8,score=10); with --resume and neither rule
    /// given, each odds keeps its resumed games' rules.
    #[arg(long, value_name = "SPEC")]
    pub(crate) draw_adj: Option<String>,
    /// The games' resign adjudication, movecount=N,score=CP or none. Default: `lab match`'s
    /// (movecount=3,score=400); with --resume as --draw-adj.
    #[arg(long, value_name = "SPEC")]
    pub(crate) resign_adj: Option<String>,
    /// List the stored models and exit.
    #[arg(long, conflicts_with_all = ["rev", "tc", "resume", "draw_adj", "resign_adj"])]
    pub(crate) show: bool,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct VerdictCommandArgs {
    /// The base revision (anything git understands, or WORKTREE).
    pub(crate) a: String,
    /// The revision under test.
    pub(crate) b: String,
    /// The clock the verdict is for, BASE+INC in seconds: it picks the speed-Elo model, and
    /// A's games against itself at it set the fixed-node budget.
    #[arg(long, value_name = "BASE+INC")]
    pub(crate) tc: String,
    /// The bounds in logistic Elo of B's total over A, e.g. elo0=-5,elo1=0 (a non-regression
    /// test); alpha and beta default to 0.05.
    #[arg(long, value_name = "SPEC", default_value = "elo0=-5,elo1=0")]
    pub(crate) sprt: String,
    /// The most measurement rounds (they double from --rounds): with the same signature,
    /// before the speed's Elo is called undecided; with different signatures and the speed
    /// from the rounds (--speed-from nps, the default at node odds), before the games start
    /// on a speed interval wider than the bounds' gap.
    #[arg(long, default_value_t = 48, value_parser = clap::value_parser!(u32).range(2..=10_000))]
    pub(crate) max_rounds: u32,
    /// With different signatures: the most fixed-node games before the SPRT is undecided;
    /// default 20,000. With --resume it becomes the games' budget (without it, the earlier
    /// verdict's is kept); one at or below the games recorded plays only an unfinished pair,
    /// so the games so far are judged again with this run's speed.
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..=1_000_000))]
    pub(crate) max_games: Option<u64>,
    /// With different signatures: continue the fixed-node games of the newest earlier verdict
    /// between the same two binaries, at that verdict's node budget; the bounds are shifted by
    /// this run's speed, and the LLR is taken over every recorded pair.
    #[arg(long)]
    pub(crate) resume: bool,
    /// Games played at once (default: the number of cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) concurrency: Option<u32>,
    /// What measures the speed term. `games` (the default with equal nodes): B's NPS over A's
    /// in the equal-node games themselves, game by game (the finest and most faithful, known
    /// only as they are played: the bounds move with it every 200 games, the paired NPS
    /// standing in until the first reading and wherever the games show no speed). `nps` (the
    /// default with --node-odds, which need the speed before the games): the paired rounds'
    /// nodes per second (what the clock feels, blurred by load). `instructions`: callgrind's
    /// instructions per node of the bench, A's over B's (exact and unmoved by load, blind to
    /// cache misses and mispredicted branches; a change of exit rates can save instructions
    /// and not time, docs/verdict.md). With the same signature the paired rounds decide.
    #[arg(long, value_enum)]
    pub(crate) speed_from: Option<SpeedFromArg>,
    /// With different signatures: give B its speed as nodes, not Elo. A plays at the node
    /// budget, B at the budget times the lower end of the speed ratio's 95% interval, and the
    /// games' Elo is the total, judged against the bounds as given: no speed-Elo model is needed
    /// and none is added (docs/verdict.md, "Node odds").
    #[arg(long)]
    pub(crate) node_odds: bool,
    /// With different signatures: A's nodes per move in the games, instead of A's fastest
    /// bench NPS × its mean time per move in 8 games against itself at --tc (played first, or
    /// stored by an earlier verdict: see --new-budget).
    /// With --node-odds B gets this times its speed ratio's lower end; with --resume only
    /// earlier games at this budget continue.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) nodes: Option<u64>,
    /// With different signatures: the games' draw adjudication,
    /// movenumber=N,movecount=N,score=CP or none. Default: `lab match`'s
    /// (movenumber=32,movecount=8,score=10), or with --resume the resumed games' (given, only
    /// games adjudicated so are resumed).
    #[arg(long, value_name = "SPEC")]
    pub(crate) draw_adj: Option<String>,
    /// With different signatures: the games' resign adjudication, movecount=N,score=CP or none.
    /// Default: `lab match`'s (movecount=3,score=400), or with --resume the resumed games'.
    #[arg(long, value_name = "SPEC")]
    pub(crate) resign_adj: Option<String>,
    /// With different signatures: time A's clock games again, instead of taking the budget
    /// they gave an earlier verdict of the same binary at --tc on this machine (kept under
    /// target/lab/budgets/), and keep the new one.
    #[arg(long, conflicts_with_all = ["nodes", "resume"])]
    pub(crate) new_budget: bool,
    #[command(flatten)]
    pub(crate) measure: MeasureArgs,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SpeedFromArg {
    Nps,
    Instructions,
    Games,
}

#[derive(Debug, Clone, Copy, Args)]
pub(crate) struct ThresholdArgs {
    /// Smallest slowdown, in percent of time per node, that counts as a regression.
    #[arg(long, default_value_t = Thresholds::DEFAULT.threshold_pct, value_parser = parse_threshold)]
    pub(crate) threshold: f64,
    /// Smallest change of instructions per node, in percent, that is flagged.
    #[arg(long, default_value_t = Thresholds::DEFAULT.instr_threshold_pct, value_parser = parse_threshold)]
    pub(crate) instr_threshold: f64,
}

/// The longest `--timeout`: a week. Longer is no limit at all, and the deadline (now plus the
/// timeout, twenty times it under callgrind) must stay a time the clock can hold.
const MAX_TIMEOUT_SECONDS: u64 = 7 * 24 * 3600;

/// Seconds a bench run may take: 1 to [`MAX_TIMEOUT_SECONDS`] (0 would fail every run).
fn timeout_seconds() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=MAX_TIMEOUT_SECONDS)
}

/// A threshold in percent: finite and not negative (NaN or infinity would switch the verdict
/// off without a word).
pub(crate) fn parse_threshold(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number (a percentage such as 1 or 0.5)"))?;
    if !value.is_finite() {
        return Err(format!("'{text}' is not a finite percentage"));
    }
    if value < 0.0 {
        return Err(format!(
            "'{text}' is negative: a threshold is a size, 0 or more"
        ));
    }
    Ok(value)
}

/// A percentile of a histogram: a number from 0 to 100 (a histogram would clamp anything else
/// to its ends without a word).
pub(crate) fn parse_percentile(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number (a percentile such as 98 or 2.5)"))?;
    if !(0.0..=100.0).contains(&value) {
        return Err(format!("'{text}' is not a percentile: expected 0 to 100"));
    }
    Ok(value)
}

#[derive(Debug, Clone, Args)]
pub(crate) struct OutputArgs {
    /// Report format.
    #[arg(long, default_value = "terminal", value_parser = report_formats(false))]
    pub(crate) format: Format,
    #[command(flatten)]
    pub(crate) export: ExportArgs,
}

/// `--format`'s values. cutechess's and fastchess's lines are a match's only, so the help of
/// every other command hides them (`commands::run` refuses them there).
fn report_formats(match_lines: bool) -> clap::builder::ValueParser {
    use clap::builder::TypedValueParser as _;
    let values = Format::value_variants().iter().filter_map(|format| {
        let match_only = matches!(format, Format::Cutechess | Format::Fastchess);
        Some(format.to_possible_value()?.hide(match_only && !match_lines))
    });
    clap::builder::PossibleValuesParser::new(values)
        .map(|name| Format::from_str(&name, false).expect("a value of Format"))
        .into()
}

/// `--format` of `lab match` and `lab match merge`, the commands that print cutechess's and
/// fastchess's lines.
fn with_match_formats(arg: clap::Arg) -> clap::Arg {
    arg.value_parser(report_formats(true))
}

/// `--export-html` hidden from the help of a command whose report has no page
/// (`commands::run` refuses it there).
fn without_html(arg: clap::Arg) -> clap::Arg {
    arg.hide(true)
}

/// The report written to files as well as printed, so one measurement serves a person and CI.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ExportArgs {
    /// Also write the report as JSON (docs/lab-json.md) to FILE, atomically.
    #[arg(long, value_name = "FILE")]
    pub(crate) export_json: Option<PathBuf>,
    /// Also write the report as markdown to FILE, atomically.
    #[arg(long, value_name = "FILE")]
    pub(crate) export_markdown: Option<PathBuf>,
    /// Also write the report as one self-contained HTML page with plots (docs/html-report.md)
    /// to FILE, atomically.
    #[arg(long, value_name = "FILE")]
    pub(crate) export_html: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum PoolCommand {
    /// Generate a stratified pool from self-play games with randomised openings: deduplicated,
    /// balanced across the 8 material buckets and between quiet and tactical positions.
    /// Deterministic for a given --count and --seed.
    Generate {
        /// Number of positions.
        #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
        count: u64,
        /// Seed of the games and of the selection.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Output file, one EPD line per position; gzip-compressed if it ends in .gz.
        #[arg(long)]
        out: PathBuf,
        /// An opening book instead (for `lab match --book`): COUNT distinct openings 8-12 plies
        /// deep, each move within 40 cp of the best, kept when a depth-8 search scores the
        /// position within 50 cp.
        #[arg(long)]
        book: bool,
    },
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct CalibrateArgs {
    #[command(subcommand)]
    pub(crate) action: Option<CalibrateCommand>,
    #[command(flatten)]
    pub(crate) run: CalibrateRunArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum CalibrateCommand {
    /// Merge calibration files of disjoint shards (bin-wise sums) and print the report.
    Merge {
        /// Calibration files written by `lab calibrate --shard I/N --out FILE`: same pool,
        /// engine tree, depth, hash and modes, disjoint shards, each file once.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Where to write the merged calibration file.
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        output: OutputArgs,
    },
}

#[derive(Debug, Clone, Args)]
pub(crate) struct CalibrateRunArgs {
    /// Revision to calibrate (anything git understands, or WORKTREE); built with
    /// `--features calibrate`.
    #[arg(default_value = "HEAD")]
    pub(crate) rev: String,
    /// Position pool (.epd or .epd.gz).
    #[arg(long, default_value = "lab/pools/strat30k.epd.gz")]
    pub(crate) pool: PathBuf,
    /// Search depth per position.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub(crate) depth: u32,
    /// Parallel engine processes (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) jobs: Option<u32>,
    /// Samplers to run (comma-separated): residual, marginsafety, qfutility, exitrate, samples.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "residual,marginsafety,qfutility"
    )]
    pub(crate) modes: Vec<String>,
    /// The samples mode: evaluation calls kept per material bucket.
    #[arg(long, value_name = "N", default_value_t = squall::calibrate::DEFAULT_SAMPLES_PER_BUCKET, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=10_000_000))]
    pub(crate) samples_per_bucket: usize,
    /// The samples mode: the seed of the reservoirs and of their merge.
    #[arg(long, default_value_t = squall::calibrate::DEFAULT_SEED)]
    pub(crate) seed: u64,
    /// Run only shard I of N: the positions whose 0-based index % N == I - 1.
    #[arg(long, value_name = "I/N")]
    pub(crate) shard: Option<String>,
    /// Write the merged calibration file here (default: calibration.json in the results dir).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Results directory (default: target/lab/calibration/<rev>-<timestamp>/).
    #[arg(long)]
    pub(crate) results: Option<PathBuf>,
    /// Percentile of qfutility_excess recommended as FUTILITY_BASE_MARGIN_BY_SOURCE.
    #[arg(long, default_value_t = DEFAULT_PERCENTILE, value_parser = parse_percentile)]
    pub(crate) percentile: f64,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Args)]
pub(crate) struct HistArgs {
    /// A calibration file (from `lab calibrate` or `squall calibrate --out`).
    pub(crate) file: PathBuf,
    /// Percentiles to read (default: 2 5 10 50 90 95 98).
    #[arg(value_parser = parse_percentile)]
    pub(crate) percentiles: Vec<f64>,
    /// Only this histogram set: lazy_residual, super_lazy_residual, king, qfutility_excess.
    #[arg(long)]
    pub(crate) set: Option<String>,
}

#[derive(Debug, Args)]
// --lo and --hi are optional in `lab tune`, so `lab tables` asks for them here (hi first, so
// that the usage line reads --lo --hi).
#[command(mut_arg("hi", |arg| arg.required(true)), mut_arg("lo", |arg| arg.required(true)))]
pub(crate) struct TablesArgs {
    /// A calibration file with residual histograms.
    pub(crate) file: PathBuf,
    #[command(flatten)]
    pub(crate) percentiles: PercentileArgs,
    /// Rewrite the block between `// BEGIN MARGIN TABLES` and `// END MARGIN TABLES` in the
    /// working tree's engine/src/eval/margins.rs (atomically). Edits your source file.
    #[arg(long)]
    pub(crate) apply: bool,
}

/// The percentiles of the margin tables, per table and per-side bucket (`lab tables`, and
/// `lab tune`'s candidate tables).
#[derive(Debug, Clone, Args)]
pub(crate) struct PercentileArgs {
    /// Low percentile of the residual tables.
    #[arg(long, requires = "hi")]
    pub(crate) lo: Option<f64>,
    /// High percentile of the residual tables.
    #[arg(long, requires = "lo")]
    pub(crate) hi: Option<f64>,
    /// Low percentile of the king tables (default: --lo).
    #[arg(long, requires = "lo")]
    pub(crate) king_lo: Option<f64>,
    /// High percentile of the king tables (default: --hi).
    #[arg(long, requires = "lo")]
    pub(crate) king_hi: Option<f64>,
    /// Per-bucket override, [TABLE:]BUCKET=LO:HI (repeatable). TABLE is king (every danger
    /// class), kingC (danger class C only: king0, king1 or king2), lazy, super-lazy or residual (both
    /// residual tables; the default), e.g. 6=5:95, super-lazy:4=2:98, king:5=3:97, king1:5=1:99.
    #[arg(long = "bucket", value_name = "[TABLE:]B=LO:HI", requires = "lo")]
    pub(crate) buckets: Vec<String>,
    /// Allow low/high pairs that are not symmetric (lo + hi != 100).
    #[arg(long, requires = "lo")]
    pub(crate) allow_asymmetric: bool,
}

#[derive(Debug, Args)]
pub(crate) struct TuneArgs {
    /// A calibration file with a `samples` field (`lab calibrate REV --modes samples`; with
    /// `residual` too for percentile tables and --search).
    pub(crate) file: PathBuf,
    /// Candidate tables: a margins.rs file, or its marked block as `lab tables` prints it
    /// (default: the working tree's engine/src/eval/margins.rs).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["search", "PercentileArgs"])]
    pub(crate) tables: Option<PathBuf>,
    /// Candidate tables at these percentiles of FILE's histograms, as `lab tables` takes them.
    #[command(flatten)]
    pub(crate) percentiles: Option<PercentileArgs>,
    /// Search the percentiles that maximise the bench-weighted cheap-exit share while every
    /// cheap tier's exceeded rate keeps its Wilson upper bound within --max-exceeded in every
    /// material bucket; prints the `lab tables` command that writes them.
    #[arg(long, conflicts_with = "PercentileArgs")]
    pub(crate) search: bool,
    /// The limit of --search on every exceeded rate's Wilson 95% upper bound, in percent.
    #[arg(long, default_value_t = 1.0, value_name = "PCT", requires = "search", value_parser = parse_percent_limit)]
    pub(crate) max_exceeded: f64,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

fn parse_percent_limit(text: &str) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|e| format!("{e}"))?;
    if value > 0.0 && value < 100.0 {
        Ok(value)
    } else {
        Err("a percentage above 0 and below 100".to_string())
    }
}

#[derive(Debug, Clone, Args)]
pub(crate) struct CompareCalibrationArgs {
    /// Also calibrate both revisions (built with --features calibrate): exceeded and exit
    /// rates side by side, and STALE warnings for QSearch futility margins (in JSON: the
    /// `calibration` field).
    #[arg(long)]
    pub(crate) calibrate: bool,
    /// Position pool of --calibrate (.epd or .epd.gz).
    #[arg(long, default_value = "lab/pools/small.epd", requires = "calibrate")]
    pub(crate) pool: PathBuf,
    /// Search depth of --calibrate.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=64), requires = "calibrate")]
    pub(crate) calib_depth: u32,
}

#[derive(Debug, Args)]
pub(crate) struct MatchArgs {
    #[command(subcommand)]
    pub(crate) action: Option<MatchCommand>,
    #[command(flatten)]
    pub(crate) play: MatchPlayArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum MatchCommand {
    /// Pool the results files of a sharded match (`--shard I/N --out FILE`) into the verdict an
    /// unsharded run of the same pairs gives. Shards of different matches are refused by name.
    #[command(after_help = MATCH_EXIT_CODES_HELP, mut_arg("format", with_match_formats))]
    Merge {
        /// Results files written by `lab match ... --shard I/N --out FILE`.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Also write the pooled games as one PGN, a new file (an existing one is refused).
        #[arg(long, value_name = "FILE")]
        pgn: Option<PathBuf>,
        #[command(flatten)]
        output: OutputArgs,
    },
}

#[derive(Debug, Clone, Args)]
#[command(mut_arg("format", with_match_formats))]
pub(crate) struct MatchPlayArgs {
    /// The base engine: a revision (anything git understands, or WORKTREE) or exe:PATH.
    /// Omitted when --engine-a gives it.
    pub(crate) a: Option<String>,
    /// The engine under test, as A. Omitted when --engine-b gives it.
    pub(crate) b: Option<String>,
    /// A's full spec, as fastchess's -engine: "cmd=PATH name=NAME args=\"-x 1\" dir=DIR
    /// option.Hash=64" (or rev=REVISION instead of cmd=); see docs/strength.md.
    #[arg(long, value_name = "SPEC")]
    pub(crate) engine_a: Option<String>,
    /// B's full spec, as --engine-a.
    #[arg(long, value_name = "SPEC")]
    pub(crate) engine_b: Option<String>,
    /// Adjudicate a draw once each side has played N moves (cutechess-cli's and fastchess's
    /// -maxmoves), counted from the opening's position.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub(crate) maxmoves: Option<u32>,
    /// Scale both clocks by REF_NPS / A's bench NPS on this machine, as OpenBench does (its
    /// `bench`, run as many times at once as games are played); nodes and depth are not scaled.
    #[arg(long, value_name = "REF_NPS", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000_000))]
    pub(crate) scale_nps: Option<u64>,
    /// Clock per game, BASE+INC in seconds (fastchess notation); the default limit.
    #[arg(long, value_name = "BASE+INC", conflicts_with_all = ["nodes", "depth", "movetime"])]
    pub(crate) tc: Option<String>,
    /// Nodes per move instead of a clock: between deterministic single-threaded engines the
    /// games replay exactly, on any machine, at any concurrency or shard split.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), conflicts_with_all = ["depth", "movetime"])]
    pub(crate) nodes: Option<u64>,
    /// Depth per move instead of a clock.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=128), conflicts_with = "movetime")]
    pub(crate) depth: Option<u32>,
    /// Milliseconds per move instead of a clock.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=86_400_000))]
    pub(crate) movetime: Option<u64>,
    /// A's own clock, BASE+INC (fastchess's per-engine tc=): overrides the match-wide limit
    /// for A only.
    #[arg(long, value_name = "BASE+INC", conflicts_with = "nodes_a")]
    pub(crate) tc_a: Option<String>,
    /// B's own clock, as --tc-a.
    #[arg(long, value_name = "BASE+INC", conflicts_with = "nodes_b")]
    pub(crate) tc_b: Option<String>,
    /// A's own nodes per move (fastchess's per-engine nodes=): overrides the match-wide limit
    /// for A only.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) nodes_a: Option<u64>,
    /// B's own nodes per move, as --nodes-a.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) nodes_b: Option<u64>,
    /// How far past its clock (or movetime) an engine may answer before it loses on time.
    #[arg(long, value_name = "MS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub(crate) timemargin: u64,
    /// Hash size for both engines (sent as the UCI option Hash when the engine has it).
    #[arg(long, value_name = "MB", value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub(crate) hash: Option<u32>,
    /// A UCI option for engine A, NAME=VALUE (repeatable).
    #[arg(long = "option-a", value_name = "NAME=VALUE")]
    pub(crate) option_a: Vec<String>,
    /// A UCI option for engine B, NAME=VALUE (repeatable).
    #[arg(long = "option-b", value_name = "NAME=VALUE")]
    pub(crate) option_b: Vec<String>,
    /// Openings: EPD (one position a line) or PGN (with --book-plies), plain or .gz. Default:
    /// the built-in book of 2,000 balanced openings (lab/books/openings.epd).
    #[arg(long, value_name = "FILE")]
    pub(crate) book: Option<PathBuf>,
    /// With a PGN book: plies of each game's main line to play (default: all).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) book_plies: Option<u32>,
    /// Seed of the opening order.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Games played at once (default: the number of cores).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) concurrency: Option<u32>,
    /// The game budget, an even number (a pair is 2 games). Default: 100, or 40,000 with --sprt.
    /// With --resume the match's budget becomes this one, never below the pairs it recorded
    /// (without --games, the results file's own is kept).
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..=100_000_000))]
    pub(crate) games: Option<u64>,
    /// Sequential test: elo0=E0,elo1=E1[,alpha=0.05,beta=0.05]. The match stops as soon as the
    /// LLR crosses a bound.
    #[arg(long, value_name = "SPEC")]
    pub(crate) sprt: Option<String>,
    /// What elo0 and elo1 mean.
    #[arg(long, value_enum, default_value_t = EloModelArg::Logistic)]
    pub(crate) elo_model: EloModelArg,
    /// Draw adjudication, movenumber=N,movecount=N,score=CP, or none.
    #[arg(long, value_name = "SPEC", default_value = DEFAULT_DRAW_ADJ)]
    pub(crate) draw_adj: String,
    /// Resign adjudication, movecount=N,score=CP, or none.
    #[arg(long, value_name = "SPEC", default_value = DEFAULT_RESIGN_ADJ)]
    pub(crate) resign_adj: String,
    /// Play only shard I of N: the pairs whose 0-based index is I-1 modulo N. Pool the shards
    /// with `lab match merge`; a shard plays its whole share (the SPRT is judged at the merge).
    #[arg(long, value_name = "I/N")]
    pub(crate) shard: Option<String>,
    /// The results file (one JSON line per game; what --resume and merge read). Default:
    /// target/lab/match/A-vs-B[-N].jsonl.
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// The PGN (default: beside the results file, .pgn).
    #[arg(long, value_name = "FILE")]
    pub(crate) pgn: Option<PathBuf>,
    /// Continue an interrupted match: --out FILE, or the newest match under target/lab/match/
    /// with the same settings. Refused, by name of the setting, if anything differs (an
    /// adjudication rule with the flag that gives the recorded one), and while another lab run
    /// writes that file (it holds a lock on it).
    #[arg(long)]
    pub(crate) resume: bool,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum EloModelArg {
    Logistic,
    Normalized,
}
