//! The arguments of `llmtool fmt`.

use std::path::PathBuf;

use clap::Args;

/// Rewrite tool files in canonical form (in place; `-` for standard input to standard output).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool fmt tool.json\n  llmtool fmt --fix tool.json     # also repair trailing/missing commas, comments, ...\n  llmtool fmt --check examples/   # exit 1 if any file would change\n  llmtool fmt --fix --diff tool.json   # what would change, as a diff; nothing written\n  llmtool fmt - < in.json > out.json"
)]
pub(crate) struct FmtArgs {
    /// Tool files, and folders searched for them; `-` reads standard input.
    #[arg(required = true, value_name = "PATH")]
    pub(crate) paths: Vec<PathBuf>,
    /// Write nothing; exit 1 if any file is not canonical.
    #[arg(long)]
    pub(crate) check: bool,
    /// Apply the safe fixes first (trailing and missing commas, comments, quoting, ...).
    #[arg(long)]
    pub(crate) fix: bool,
    /// Write nothing; print what would change as a unified diff, and exit 1 if anything would.
    #[arg(long)]
    pub(crate) diff: bool,
}
