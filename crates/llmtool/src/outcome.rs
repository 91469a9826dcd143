//! [`Outcome`]: what a command concluded, and the exit status it becomes.

use std::process::ExitCode;

/// What a command concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Ok,
    /// The input (or the model's output) has problems.
    Problems,
    /// Interrupted (Ctrl-C).
    Cancelled,
}

impl Outcome {
    /// 0 ok, 1 the input has problems, 130 interrupted (as a shell reports Ctrl-C). A failure
    /// to run at all (usage, I/O, network) is 2, and is not an outcome but an error.
    pub(crate) fn exit_code(self) -> ExitCode {
        match self {
            Outcome::Ok => ExitCode::SUCCESS,
            Outcome::Problems => ExitCode::from(1),
            Outcome::Cancelled => ExitCode::from(130),
        }
    }
}
