//! The arguments of `llmtool check`.

use std::path::PathBuf;

use clap::Args;

use crate::cli::DiagnosticFormat;

/// Check tool files and report every problem, with fixes where there are any.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool check tool.json\n  llmtool check                        # every tool file under the current folder\n  llmtool check --strict examples/      # warnings fail too\n  llmtool check --format github tools/  # annotations in GitHub Actions\n  llmtool check --ignore LT215 tools/   # not this rule (or `[check] ignore = [\"LT215\"]` in the config)\n  cat tool.json | llmtool check -"
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
    /// Report only these rules: a code (`LT215`), a prefix of codes (`LT2`) or a rule's name
    /// (repeat for several; the config file's `[check] select` adds to them).
    #[arg(long, value_name = "RULE")]
    pub(crate) select: Vec<String>,
    /// Do not report these rules, given as for `--select` (the config file's `[check] ignore`
    /// adds to them). A file that cannot be read is always reported.
    #[arg(long, value_name = "RULE")]
    pub(crate) ignore: Vec<String>,
    /// The configuration file (default: `$XDG_CONFIG_HOME/llmtool/config.toml`).
    #[arg(long, value_name = "FILE", env = "LLMTOOL_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// Not a flag of `check`, which changes no file: `llmtool fmt --fix` applies the fixes.
    #[arg(long, hide = true)]
    pub(crate) fix: bool,
}
