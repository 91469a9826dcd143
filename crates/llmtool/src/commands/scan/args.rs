//! The arguments of `llmtool scan`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Find sensitive values (e-mail addresses, phone and card numbers, IBANs, national ids, IP
/// addresses, credentials, keys and tokens) in a text, or in what a tool file sends a model:
/// its prompt and its variables' defaults and allowed values. Prints each finding's kind,
/// place and confidence, never the value.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool scan notes.txt\n  pbpaste | llmtool scan -\n  llmtool scan examples/email-reply-ko.json --format json\n  llmtool scan tools/                  # every tool file in a folder\n\nThe config file's [dlp] table adds patterns and word lists, allowed values and ignored kinds.\nExit status 1 when something is found. See docs/dlp.md."
)]
pub(crate) struct ScanArgs {
    /// Text or tool files, folders (scanned for the tool files in them, as `check` finds
    /// them), or `-` for standard input.
    #[arg(value_name = "PATH", default_value = "-")]
    pub(crate) files: Vec<PathBuf>,
    /// How the findings are printed.
    #[arg(long, value_enum, default_value_t = ScanFormat::Human)]
    pub(crate) format: ScanFormat,
    /// The configuration file (default: `$XDG_CONFIG_HOME/llmtool/config.toml`).
    #[arg(long, value_name = "FILE", env = "LLMTOOL_CONFIG")]
    pub(crate) config: Option<PathBuf>,
}

/// What `scan` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ScanFormat {
    /// `FILE:LINE:COLUMN: kind (confidence)` a line each.
    Human,
    /// `{"file", "findings": [{kind, rule, label, confidence, line, column, end_line,
    /// end_column, start, end, field}]}` (`start` and `end` in bytes); a list of them for a
    /// folder or several files.
    Json,
}
