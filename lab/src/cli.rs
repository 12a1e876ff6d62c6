//! Command-line surface. Kept declarative so `lab --help` is the reference for every option.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0  no regression
  1  regression: the slowdown is significant (95% CI excludes no change) and beyond --threshold,
     or, with an unchanged signature, instructions per node grew by --instr-threshold or more
  2  error (bad revision, failed build, crashed or non-deterministic engine, bad baseline, ...)";

/// Squall Lab: performance-regression lab for the squall chess engine.
///
/// Builds the engine of any git revision (or the uncommitted WORKTREE) in a cache under
/// target/lab/, runs `squall bench --json` and reports the node signature, NPS with a
/// bootstrap confidence interval, callgrind instruction counts and eval-exit rates.
#[derive(Debug, Parser)]
#[command(name = "lab", version, after_help = EXIT_CODES_HELP)]
pub struct Cli {
    /// Repository to operate on (default: discovered from the current directory).
    #[arg(long, global = true, value_name = "PATH")]
    pub repo: Option<PathBuf>,

    /// Print no progress lines or bars.
    #[arg(long, short, global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compare two revisions: signature, NPS, instructions and eval exits.
    #[command(after_help = EXIT_CODES_HELP)]
    Compare(CompareArgs),
    /// Measure one revision.
    #[command(after_help = EXIT_CODES_HELP)]
    Bench(BenchArgs),
    /// Save, check or show a stored baseline (baselines/NAME.json).
    Baseline {
        #[command(subcommand)]
        action: BaselineCommand,
    },
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Old revision (anything git understands, or WORKTREE).
    pub a: String,
    /// New revision (anything git understands, or WORKTREE).
    pub b: String,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub verdict: VerdictArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Revision to measure (anything git understands, or WORKTREE).
    #[arg(default_value = "HEAD")]
    pub rev: String,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Measure a revision and store the figures as baselines/NAME.json.
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
        #[arg(long, value_parser = clap::value_parser!(u32).range(2..))]
        rounds: Option<u32>,
        /// Skip the callgrind instruction count.
        #[arg(long)]
        no_instructions: bool,
        /// Seconds a single bench run may take before it is killed.
        #[arg(long, default_value_t = 300)]
        timeout: u64,
        #[command(flatten)]
        verdict: VerdictArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Print a stored baseline.
    Show {
        name: String,
        #[command(flatten)]
        output: OutputArgs,
    },
}

#[derive(Debug, Clone, Args)]
pub struct MeasureArgs {
    /// Measurement rounds. `compare` runs each round as a pair, alternating A B, B A, ...
    /// (ABBA order); `bench` and `baseline save` run the binary once per round.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(2..))]
    pub rounds: u32,
    /// Bench depth for the signature and NPS runs (default: the engine's own default).
    #[arg(long)]
    pub depth: Option<u32>,
    /// Bench depth of the callgrind run per binary (a second run at depth 1 measures start-up
    /// work, which is subtracted from the per-node figure).
    #[arg(long, default_value_t = 6)]
    pub instr_depth: u32,
    /// Skip the callgrind instruction count.
    #[arg(long)]
    pub no_instructions: bool,
    /// Extra cargo features to build the engine with (comma-separated or repeated).
    #[arg(long, value_delimiter = ',')]
    pub features: Vec<String>,
    /// Seconds a single bench run may take before it is killed (callgrind gets 20 times as long).
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
}

#[derive(Debug, Clone, Copy, Args)]
pub struct VerdictArgs {
    /// Smallest slowdown, in percent of time per node, that counts as a regression.
    #[arg(long, default_value_t = 1.0)]
    pub threshold: f64,
    /// Smallest change of instructions per node, in percent, that is flagged.
    #[arg(long, default_value_t = 0.5)]
    pub instr_threshold: f64,
}

#[derive(Debug, Clone, Copy, Args)]
pub struct OutputArgs {
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Terminal)]
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Terminal,
    Json,
    Markdown,
}
