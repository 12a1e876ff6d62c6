//! Progress output: bars and spinners when a person is watching the terminal, plain lines on
//! stderr otherwise, so logs and `--format json` pipelines stay clean. A message may carry
//! outside text (an engine's name, a commit subject): its control characters are written out
//! ([`crate::report::sanitize`]), never sent to the terminal.

use std::cell::Cell;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::digits::format_duration;
use crate::report::sanitize::visible_lines;

/// `eprintln!` that never panics: a diagnostic that cannot be written (stderr closed or on a
/// full disk) is dropped, and the games or measurements it described go on.
macro_rules! to_stderr {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// A warning on stderr whatever `--quiet` says: what changed the run (a worktree file left
/// out of the snapshot, an interrupt) or ended it (main's error). Its outside text (paths,
/// git's names, an engine's output) is shown as by [`visible_lines`]. Notes go through
/// [`Progress::line`], which `--quiet` silences.
pub fn warning(message: &str) {
    to_stderr!("{}", visible_lines(message));
}

#[derive(Debug, Clone, Copy)]
pub struct Progress {
    interactive: bool,
    quiet: bool,
}

/// `steps` steps of `per_step` each, at most `Duration::MAX`: a step's time may come from a
/// file (a resumed match's recorded games), where any figure can be.
pub(crate) fn steps_time(per_step: Duration, steps: u64) -> Duration {
    Duration::try_from_secs_f64(per_step.as_secs_f64() * steps as f64).unwrap_or(Duration::MAX)
}

/// The time left when `done` of `total` equal steps took `elapsed`; `None` before the first.
pub(crate) fn eta(elapsed: Duration, done: u64, total: u64) -> Option<Duration> {
    (done > 0).then(|| elapsed.mul_f64(total.saturating_sub(done) as f64 / done as f64))
}

pub(crate) struct Task {
    bar: Option<ProgressBar>,
    /// Without a bar: the task's message and start, for the steps' ETA and the closing line.
    plain: Option<PlainTask>,
}

struct PlainTask {
    message: String,
    started: Instant,
    /// Each step printed as its own line, with the steps done and the ETA (a counter).
    steps: Option<(Cell<u64>, u64)>,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        let interactive = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
        Self { interactive, quiet }
    }

    pub(crate) fn line(&self, message: &str) {
        if !self.quiet {
            to_stderr!("{}", visible_lines(message));
        }
    }

    /// A wait of unknown length (a build, a callgrind run): a spinner with the time elapsed, or
    /// a line when it starts and one with its duration when it ends.
    pub(crate) fn spinner(&self, message: &str) -> Task {
        if self.quiet {
            return Task::silent();
        }
        let message = visible_lines(message).into_owned();
        if !self.interactive {
            to_stderr!("{message} ...");
            return Task::plain(message, None);
        }
        let style = ProgressStyle::with_template("{spinner} {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let bar = ProgressBar::new_spinner()
            .with_style(style)
            .with_message(message);
        bar.enable_steady_tick(Duration::from_millis(120));
        Task {
            bar: Some(bar),
            plain: None,
        }
    }

    /// `total` steps of about equal length (measurement runs): a bar with the time elapsed and
    /// the time left, or a line per step with the steps done and the time left.
    pub(crate) fn counter(&self, total: u64, message: &str) -> Task {
        if self.quiet {
            return Task::silent();
        }
        let message = visible_lines(message).into_owned();
        if !self.interactive {
            to_stderr!("{message}: {total} runs");
            return Task::plain(message, Some(total));
        }
        let style =
            ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed} (ETA {eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
        let bar = ProgressBar::new(total)
            .with_style(style)
            .with_message(message);
        Task {
            bar: Some(bar),
            plain: None,
        }
    }
}

impl Task {
    fn silent() -> Self {
        Task {
            bar: None,
            plain: None,
        }
    }

    fn plain(message: String, total: Option<u64>) -> Self {
        Task {
            bar: None,
            plain: Some(PlainTask {
                message,
                started: Instant::now(),
                steps: total.map(|total| (Cell::new(0), total)),
            }),
        }
    }

    pub(crate) fn advance(&self, detail: &str) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(visible_lines(detail).into_owned());
        } else if let Some(PlainTask {
            started,
            steps: Some((done, total)),
            ..
        }) = &self.plain
        {
            done.set(done.get() + 1);
            let left = eta(started.elapsed(), done.get(), *total)
                .map_or_else(String::new, |left| {
                    format!(", ETA {}", format_duration(left))
                });
            to_stderr!("  {} [{}/{total}{left}]", visible_lines(detail), done.get());
        }
    }

    pub(crate) fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
        if let Some(plain) = self.plain {
            to_stderr!(
                "{}: done in {}",
                plain.message,
                format_duration(plain.started.elapsed())
            );
        }
    }
}

/// A status line for long work that reports as it goes (a match): a bar with a message when a
/// person is watching, otherwise the message as a plain line at most every [`STATUS_EVERY`].
pub(crate) struct Status {
    bar: Option<ProgressBar>,
    plain: bool,
    last_line: std::cell::Cell<Option<std::time::Instant>>,
}

pub(crate) const STATUS_EVERY: Duration = Duration::from_secs(15);

impl Progress {
    pub(crate) fn status(&self, total: u64) -> Status {
        if self.quiet {
            return Status {
                bar: None,
                plain: false,
                last_line: std::cell::Cell::new(None),
            };
        }
        let bar = self.interactive.then(|| {
            let style = ProgressStyle::with_template("[{bar:20}] {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            ProgressBar::new(total).with_style(style)
        });
        Status {
            plain: bar.is_none(),
            bar,
            last_line: std::cell::Cell::new(None),
        }
    }
}

impl Status {
    pub(crate) fn update(&self, position: u64, message: &str, force: bool) {
        if let Some(bar) = &self.bar {
            bar.set_position(position);
            bar.set_message(visible_lines(message).into_owned());
        } else if self.plain {
            let due = self
                .last_line
                .get()
                .is_none_or(|last| last.elapsed() >= STATUS_EVERY);
            if due || force {
                to_stderr!("{}", visible_lines(message));
                self.last_line.set(Some(std::time::Instant::now()));
            }
        }
    }

    pub(crate) fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_from_absurd_steps_saturates_rather_than_panics() {
        assert_eq!(
            steps_time(Duration::from_millis(1500), 4),
            Duration::from_secs(6)
        );
        assert_eq!(steps_time(Duration::MAX, 40_000), Duration::MAX);
        assert_eq!(steps_time(Duration::from_secs(5), 0), Duration::ZERO);
    }

    #[test]
    fn the_eta_scales_the_time_so_far_by_the_steps_left() {
        let second = Duration::from_secs(1);
        assert_eq!(eta(second * 10, 0, 12), None);
        assert_eq!(eta(second * 10, 2, 12), Some(second * 50));
        assert_eq!(eta(second * 10, 12, 12), Some(Duration::ZERO));
        assert_eq!(eta(second * 10, 13, 12), Some(Duration::ZERO));
    }
}
