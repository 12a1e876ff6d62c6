//! Progress output: bars and spinners when a person is watching the terminal, plain lines on
//! stderr otherwise, so logs and `--format json` pipelines stay clean. A message may carry
//! outside text (an engine's name, a commit subject): its control characters are written out
//! ([`crate::report::sanitize`]), never sent to the terminal.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::report::sanitize::visible_lines;

/// A note or warning on stderr whatever `--quiet` says (a cache entry rebuilt, a file skipped),
/// its outside text (paths, git's names) shown as by [`visible_lines`].
pub fn note(message: &str) {
    eprintln!("{}", visible_lines(message));
}

#[derive(Debug, Clone, Copy)]
pub struct Progress {
    interactive: bool,
    quiet: bool,
}

pub struct Task {
    bar: Option<ProgressBar>,
    /// Without a bar, each step is printed as its own line.
    plain_steps: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        let interactive = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
        Self { interactive, quiet }
    }

    pub fn line(&self, message: &str) {
        if !self.quiet {
            eprintln!("{}", visible_lines(message));
        }
    }

    pub fn spinner(&self, message: &str) -> Task {
        if self.quiet {
            return Task::silent();
        }
        if !self.interactive {
            eprintln!("{} ...", visible_lines(message));
            return Task::silent();
        }
        let bar = ProgressBar::new_spinner().with_message(visible_lines(message).into_owned());
        bar.enable_steady_tick(Duration::from_millis(120));
        Task {
            bar: Some(bar),
            plain_steps: false,
        }
    }

    pub fn counter(&self, total: u64, message: &str) -> Task {
        if self.quiet {
            return Task::silent();
        }
        if !self.interactive {
            eprintln!("{}: {total} runs", visible_lines(message));
            return Task {
                bar: None,
                plain_steps: true,
            };
        }
        let style = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        let bar = ProgressBar::new(total)
            .with_style(style)
            .with_message(visible_lines(message).into_owned());
        Task {
            bar: Some(bar),
            plain_steps: false,
        }
    }
}

impl Task {
    fn silent() -> Self {
        Task {
            bar: None,
            plain_steps: false,
        }
    }

    pub fn advance(&self, detail: &str) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(visible_lines(detail).into_owned());
        } else if self.plain_steps {
            eprintln!("  {}", visible_lines(detail));
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A status line for long work that reports as it goes (a match): a bar with a message when a
/// person is watching, otherwise the message as a plain line at most every [`STATUS_EVERY`].
pub struct Status {
    bar: Option<ProgressBar>,
    plain: bool,
    last_line: std::cell::Cell<Option<std::time::Instant>>,
}

pub const STATUS_EVERY: Duration = Duration::from_secs(15);

impl Progress {
    pub fn status(&self, total: u64) -> Status {
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
    pub fn update(&self, position: u64, message: &str, force: bool) {
        if let Some(bar) = &self.bar {
            bar.set_position(position);
            bar.set_message(visible_lines(message).into_owned());
        } else if self.plain {
            let due = self
                .last_line
                .get()
                .is_none_or(|last| last.elapsed() >= STATUS_EVERY);
            if due || force {
                eprintln!("{}", visible_lines(message));
                self.last_line.set(Some(std::time::Instant::now()));
            }
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
