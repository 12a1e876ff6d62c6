//! How the lab exits when a command ran: the documented codes other than 2 (errors), which
//! `main.rs` adds.

/// The documented exit codes other than 2 (errors): `lab --help`, `lab match --help` and
/// `lab verdict --help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: no regression; for a match, H1 accepted or the match finished without an SPRT; for a
    /// verdict, H1 accepted.
    Clean,
    /// 1: a regression; for a match or a verdict, H0 accepted.
    Regression,
    /// 3: a match spent its game budget without an SPRT decision, or a verdict is undecided.
    Undecided,
    /// 130: a match or a verdict interrupted by SIGINT or SIGTERM, reported with the games it had.
    Interrupted,
}

impl Exit {
    pub(crate) fn regression_if(regression: bool) -> Exit {
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
            Exit::Interrupted => crate::process::INTERRUPTED_EXIT,
        }
    }
}
