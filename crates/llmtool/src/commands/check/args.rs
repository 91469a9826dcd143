//! The arguments of `llmtool check`.

use std::path::PathBuf;

use clap::Args;

use crate::cli::DiagnosticFormat;

/// Check tool files and report every problem, with fixes where there are any.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool check tool.json\n  llmtool check                        # every tool file under the current folder\n  llmtool check --strict examples/      # warnings fail too\n  llmtool check --format github tools/  # annotations in GitHub Actions\n  cat tool.json | llmtool check -"
)]
pub(crate) struct CheckArgs {
    /// Tool files, and folders searched recursively for `*.json` (hidden ones skipped,
    /// symbolic links followed); `-` reads standard input. None: the current folder.
    #[arg(value_name = "PATH", default_value = ".")]
    pub(crate) paths: Vec<PathBuf>,
    /// Treat warnings as errors (for CI and for publishing).
    #[arg(long)]
    pub(crate) strict: bool,
    /// How the diagnostics are printed.
    #[arg(long, value_enum, default_value_t = DiagnosticFormat::Human)]
    pub(crate) format: DiagnosticFormat,
    /// Not a flag of `check`, which changes no file: `llmtool fmt --fix` applies the fixes.
    #[arg(long, hide = true)]
    pub(crate) fix: bool,
}
