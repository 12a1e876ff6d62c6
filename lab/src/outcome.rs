//! What a command produced: its report, not yet laid out, and how the lab exits.

use crate::exit::Exit;
use crate::report::Report;

/// What a command produced: the report (laid out in the format asked for by the dispatcher)
/// and how the lab exits.
pub(crate) struct Outcome {
    pub(crate) report: Report,
    pub(crate) exit: Exit,
}

impl Outcome {
    /// A report that judges nothing: exit 0.
    pub(crate) fn clean(report: Report) -> Outcome {
        Outcome {
            report,
            exit: Exit::Clean,
        }
    }
}
