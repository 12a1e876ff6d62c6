//! Command dispatch: wires revisions, builds, measurements and reports together.

use std::fs::File;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use git2::Repository;

use crate::baseline::{self, Baseline, BaselineSettings};
use crate::build::{build_engine, EngineBinary};
use crate::calibration;
use crate::cli::{
    BaselineCommand, BenchArgs, CalibrateArgs, CalibrateCommand, Cli, Command, CompareArgs, Format,
    MatchArgs, MatchCommand, MeasureArgs, TiersArgs, VerdictArgs,
};
use crate::compare::{
    compare, summarize, Comparison, Criteria, PositionsSetting, Settings, LAB_JSON_SCHEMA_VERSION,
};
use crate::machine::{comparability, Machine, Toolchain};
use crate::measure::{measure_pair, measure_single, Plan, Subject};
use crate::paths::LabPaths;
use crate::progress::Progress;
use crate::report::{render, BaselineOutput, BenchOutput, Report};
use crate::revision::{open_repository, resolve, Revision};

/// What a command produced: the report for stdout and how the lab exits.
pub struct Outcome {
    pub report: String,
    pub exit: Exit,
}

/// The documented exit codes other than 2 (errors): `lab --help` and `lab match --help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: no regression; for a match, H1 accepted or the match finished without an SPRT.
    Clean,
    /// 1: a regression; for a match, H0 accepted.
    Regression,
    /// 3: a match spent its game budget without an SPRT decision.
    Undecided,
}

impl Exit {
    pub fn regression_if(regression: bool) -> Exit {
        if regression {
            Exit::Regression
        } else {
            Exit::Clean
        }
    }

    pub fn code(self) -> u8 {
        match self {
            Exit::Clean => 0,
            Exit::Regression => 1,
            Exit::Undecided => 3,
        }
    }
}

pub fn run(cli: Cli) -> Result<Outcome> {
    let progress = Progress::new(cli.quiet);
    // Commands that need no revision or build cache.
    let command = match cli.command {
        Command::Pool { action } => return calibration::commands::pool(action, &progress),
        Command::Hist(args) => return calibration::commands::hist(&args),
        Command::Tables(args) => return calibration::commands::tables(&args, cli.repo.as_deref()),
        Command::Calibrate(CalibrateArgs {
            action: Some(CalibrateCommand::Merge { files, out }),
            ..
        }) => return calibration::commands::merge(&files, out.as_deref(), &progress),
        Command::Match(args) => {
            let MatchArgs { action, play } = *args;
            return match action {
                Some(MatchCommand::Merge { files, pgn, output }) => {
                    crate::games::merge(&files, pgn.as_deref(), output.format)
                }
                None => crate::games::run(open_workdir(cli.repo.as_deref()), &progress, &play),
            };
        }
        command => command,
    };
    let (repo, paths) = open_workdir(cli.repo.as_deref())?;
    match command {
        Command::Calibrate(args) => {
            let lab = Lab::open(repo, paths, progress)?;
            calibration::commands::calibrate(&lab.repo, &lab.paths, &lab.progress, &args.run)
        }
        Command::Pool { .. } | Command::Hist(_) | Command::Tables(_) | Command::Match(_) => {
            unreachable!("dispatched above")
        }
        Command::Profile(args) => {
            let lab = Lab::open(repo, paths, progress)?;
            crate::profile::run(&lab.repo, &lab.paths, &lab.progress, &args)
        }
        Command::Compare(args) => Lab::open(repo, paths, progress)?.compare(&args),
        Command::Bench(args) => Lab::open(repo, paths, progress)?.bench(&args),
        Command::Tiers(args) => Lab::open(repo, paths, progress)?.tiers(&args),
        Command::Baseline {
            action: BaselineCommand::Show { name, output },
        } => show_baseline(&paths, &name, output.format),
        Command::Baseline {
            action: BaselineCommand::Save { name, rev, measure },
        } => Lab::open(repo, paths, progress)?.save_baseline(&name, &rev, &measure),
        Command::Baseline {
            action:
                BaselineCommand::Check {
                    name,
                    rev,
                    rounds,
                    no_instructions,
                    timeout,
                    verdict,
                    output,
                },
        } => {
            let check = CheckRequest {
                name,
                rev,
                rounds,
                no_instructions,
                timeout,
                verdict,
                format: output.format,
            };
            Lab::open(repo, paths, progress)?.check_baseline(&check)
        }
    }
}

/// The repository and the lab's paths inside its working tree.
fn open_workdir(repo: Option<&std::path::Path>) -> Result<(Repository, LabPaths)> {
    let repo = open_repository(repo)?;
    let paths = LabPaths::new(
        repo.workdir()
            .expect("open_repository refuses bare repositories"),
    );
    Ok((repo, paths))
}

struct CheckRequest {
    name: String,
    rev: String,
    rounds: Option<u32>,
    no_instructions: bool,
    timeout: u64,
    verdict: VerdictArgs,
    format: Format,
}

/// An open repository with the cache locked for the duration of the command.
pub struct Lab {
    repo: Repository,
    paths: LabPaths,
    progress: Progress,
    _lock: File,
}

impl Lab {
    pub fn open(repo: Repository, paths: LabPaths, progress: Progress) -> Result<Self> {
        paths.create_dirs()?;
        let lock = paths.lock(|| {
            progress.line("waiting for another lab run to finish (target/lab/lock) ...")
        })?;
        paths.remove_stale_temporaries()?;
        Ok(Self {
            repo,
            paths,
            progress,
            _lock: lock,
        })
    }

    pub fn repo(&self) -> &Repository {
        &self.repo
    }

    pub fn paths(&self) -> &LabPaths {
        &self.paths
    }

    pub fn build(&self, revision: &Revision, features: &[String]) -> Result<EngineBinary> {
        let features: Vec<&str> = features.iter().map(String::as_str).collect();
        build_engine(&self.repo, revision, &features, &self.paths, &self.progress)
    }

    /// The measurement plan. A `--positions` file is read and checked line by line (plain or
    /// gzip), thinned to every Nth position, and written as plain EPD into the scratch
    /// directory, where every bench run of this command reads it.
    fn plan(&self, measure: &MeasureArgs) -> Result<(Plan, Option<PositionsSetting>)> {
        let mut plan = Plan {
            depth: measure.depth,
            rounds: measure.rounds,
            instr_depth: measure.instr_depth,
            instructions: !measure.no_instructions,
            timeout: Duration::from_secs(measure.timeout),
            positions: None,
        };
        let Some(file) = &measure.positions else {
            return Ok((plan, None));
        };
        let every = measure.every.unwrap_or(1);
        let fens: Vec<String> = crate::pool::read_pool(file)?
            .into_iter()
            .step_by(every as usize)
            .collect();
        let path = self.paths.scratch.join("positions.epd");
        crate::paths::write_atomically(&path, (fens.join("\n") + "\n").as_bytes())?;
        self.progress.line(&format!(
            "benching {} positions of {}",
            fens.len(),
            file.display()
        ));
        plan.positions = Some(path);
        let setting = PositionsSetting {
            file: file.display().to_string(),
            every,
            count: fens.len(),
        };
        Ok((plan, Some(setting)))
    }

    fn compare(&self, args: &CompareArgs) -> Result<Outcome> {
        // Resolve both before building either, so a typo fails in a second, not after a build.
        let a = resolve(&self.repo, &args.a, &self.paths)?;
        let b = resolve(&self.repo, &args.b, &self.paths)?;
        let (plan, positions) = self.plan(&args.measure)?;
        let a_binary = self.build(&a, &args.measure.features)?;
        let b_binary = self.build(&b, &args.measure.features)?;
        let (a_measurement, b_measurement) = measure_pair(
            &Subject {
                label: "A",
                revision: &a,
                binary: &a_binary,
                full_eval: false,
            },
            &Subject {
                label: "B",
                revision: &b,
                binary: &b_binary,
                full_eval: false,
            },
            &plan,
            &self.paths,
            &self.progress,
        )?;
        let criteria = Criteria::local(args.verdict.threshold, args.verdict.instr_threshold, false);
        let mut comparison = compare(
            "compare",
            settings(&args.measure, &args.verdict, positions),
            ("A", &a_measurement),
            ("B", &b_measurement),
            criteria,
        );
        if args.functions.functions {
            comparison.functions = Some(crate::functions::measure_functions(
                [&a_binary.path, &b_binary.path],
                args.measure.instr_depth,
                plan.positions.as_deref(),
                args.functions.functions_top,
                Duration::from_secs(args.measure.timeout),
                &self.paths,
                &self.progress,
            )?);
        }
        let mut outcome = comparison_outcome(&comparison, args.output.format);
        if args.calibration.calibrate {
            let section = calibration::commands::compare_calibration(
                &self.repo,
                &self.paths,
                &self.progress,
                [&a, &b],
                &args.calibration,
            )?;
            if args.output.format == Format::Json {
                eprint!("{section}");
            } else {
                outcome.report.push_str(&section);
            }
        }
        Ok(outcome)
    }

    fn bench(&self, args: &BenchArgs) -> Result<Outcome> {
        let revision = resolve(&self.repo, &args.rev, &self.paths)?;
        let (plan, positions) = self.plan(&args.measure)?;
        let binary = self.build(&revision, &args.measure.features)?;
        let subject = Subject {
            label: "A",
            revision: &revision,
            binary: &binary,
            full_eval: false,
        };
        let measurement = measure_single(&subject, &plan, &self.paths, &self.progress)?;
        let output = BenchOutput {
            schema_version: LAB_JSON_SCHEMA_VERSION,
            kind: "bench",
            settings: settings(
                &args.measure,
                &VerdictArgs {
                    threshold: 0.0,
                    instr_threshold: 0.0,
                },
                positions,
            ),
            revision: summarize(&args.rev, &measurement),
        };
        Ok(Outcome {
            report: render(&Report::Bench(&output), args.output.format),
            exit: Exit::Clean,
        })
    }

    fn tiers(&self, args: &TiersArgs) -> Result<Outcome> {
        let revision = resolve(&self.repo, &args.rev, &self.paths)?;
        let (plan, positions) = self.plan(&args.measure)?;
        let binary = self.build(&revision, &args.measure.features)?;
        let subject = |label, full_eval| Subject {
            label,
            revision: &revision,
            binary: &binary,
            full_eval,
        };
        let (mut full_eval, tiers) = measure_pair(
            &subject("A", true),
            &subject("B", false),
            &plan,
            &self.paths,
            &self.progress,
        )?;
        full_eval.revision.spec = format!("{} --full-eval", args.rev);
        let comparison = compare(
            "tiers",
            settings(&args.measure, &args.verdict, positions),
            ("A", &full_eval),
            ("B", &tiers),
            Criteria::local(args.verdict.threshold, args.verdict.instr_threshold, true),
        );
        Ok(comparison_outcome(&comparison, args.output.format))
    }

    fn save_baseline(&self, name: &str, rev: &str, measure: &MeasureArgs) -> Result<Outcome> {
        if measure.positions.is_some() {
            anyhow::bail!(
                "a baseline is the engine's built-in bench: `baseline save` takes no --positions \
                 (compare, tiers and bench do)"
            );
        }
        let path = baseline::baseline_path(&self.paths, name)?;
        let revision = resolve(&self.repo, rev, &self.paths)?;
        let binary = self.build(&revision, &measure.features)?;
        let subject = Subject {
            label: "A",
            revision: &revision,
            binary: &binary,
            full_eval: false,
        };
        let (plan, _) = self.plan(measure)?;
        let measurement = measure_single(&subject, &plan, &self.paths, &self.progress)?;
        let stored = Baseline {
            schema_version: baseline::BASELINE_SCHEMA_VERSION,
            name: name.to_string(),
            created_unix: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            machine: Machine::current(),
            toolchain: Toolchain::current(&self.paths.workdir)?,
            settings: BaselineSettings {
                depth: measure.depth,
                rounds: measure.rounds,
                instr_depth: measure.instr_depth,
                features: measure.features.clone(),
            },
            measurement,
        };
        baseline::save(&path, &stored)?;
        self.progress.line(&format!("saved {}", path.display()));
        Ok(Outcome {
            report: render(
                &Report::Baseline(&baseline_output(&stored)),
                Format::Terminal,
            ),
            exit: Exit::Clean,
        })
    }

    fn check_baseline(&self, request: &CheckRequest) -> Result<Outcome> {
        let path = baseline::baseline_path(&self.paths, &request.name)?;
        let stored = baseline::load(&path)?;
        let revision = resolve(&self.repo, &request.rev, &self.paths)?;
        let binary = self.build(&revision, &stored.settings.features)?;
        let measure = MeasureArgs {
            rounds: request.rounds.unwrap_or(stored.settings.rounds),
            depth: stored.settings.depth,
            instr_depth: stored.settings.instr_depth,
            no_instructions: request.no_instructions,
            features: stored.settings.features.clone(),
            timeout: request.timeout,
            positions: None,
            every: None,
        };
        let subject = Subject {
            label: "B",
            revision: &revision,
            binary: &binary,
            full_eval: false,
        };
        let (plan, _) = self.plan(&measure)?;
        let measurement = measure_single(&subject, &plan, &self.paths, &self.progress)?;
        let toolchain = Toolchain::current(&self.paths.workdir)?;
        let machine = Machine::current();
        let setting = comparability((&stored.machine, &stored.toolchain), (&machine, &toolchain));
        let criteria = Criteria {
            nps_comparable: setting.nps,
            toolchain_comparable: setting.toolchain,
            machine_differences: setting.differences,
            machine_unknown: setting.unknown,
            ..Criteria::local(
                request.verdict.threshold,
                request.verdict.instr_threshold,
                false,
            )
        };
        let comparison = compare(
            "baseline-check",
            settings(&measure, &request.verdict, None),
            (&format!("baseline {}", stored.name), &stored.measurement),
            ("revision", &measurement),
            criteria,
        );
        Ok(comparison_outcome(&comparison, request.format))
    }
}

fn show_baseline(paths: &LabPaths, name: &str, format: Format) -> Result<Outcome> {
    let stored = baseline::load(&baseline::baseline_path(paths, name)?)?;
    Ok(Outcome {
        report: render(&Report::Baseline(&baseline_output(&stored)), format),
        exit: Exit::Clean,
    })
}

fn baseline_output(stored: &Baseline) -> BaselineOutput {
    let settings = &stored.settings;
    BaselineOutput {
        schema_version: LAB_JSON_SCHEMA_VERSION,
        kind: "baseline",
        name: stored.name.clone(),
        created_unix: stored.created_unix,
        machine: stored.machine.clone(),
        toolchain: stored.toolchain.clone(),
        settings: Settings {
            rounds: settings.rounds,
            depth: settings.depth,
            instr_depth: settings.instr_depth,
            threshold_pct: 0.0,
            instr_threshold_pct: 0.0,
            positions: None,
        },
        revision: summarize(&stored.name, &stored.measurement),
    }
}

fn comparison_outcome(comparison: &Comparison, format: Format) -> Outcome {
    Outcome {
        report: render(&Report::Comparison(comparison), format),
        exit: Exit::regression_if(comparison.regression),
    }
}

fn settings(
    measure: &MeasureArgs,
    verdict: &VerdictArgs,
    positions: Option<PositionsSetting>,
) -> Settings {
    Settings {
        rounds: measure.rounds,
        depth: measure.depth,
        instr_depth: measure.instr_depth,
        threshold_pct: verdict.threshold,
        instr_threshold_pct: verdict.instr_threshold,
        positions,
    }
}
