//! The arguments of `llmtool lsp`.

use std::path::PathBuf;

use clap::Args;

/// The language server for tool files, on standard input and output: diagnostics as you type,
/// quick fixes, formatting, completion, hover, go to definition, references and rename. Your
/// editor starts it; see docs/editors.md.
#[derive(Debug, Args)]
#[command(
    after_help = "Files ending .llmtool.json, matching the client's initializationOptions.globs, or JSON with\nmodel_prompt at the top are tool files; others get nothing."
)]
pub(crate) struct LspArgs {
    /// Talk over standard input and output (the only transport; accepted because editors pass it).
    #[arg(long)]
    pub(crate) stdio: bool,
    /// The configuration file whose `[prices]` hover and completion show (default:
    /// `$XDG_CONFIG_HOME/llmtool/config.toml`).
    #[arg(long, value_name = "FILE", env = "LLMTOOL_CONFIG")]
    pub(crate) config: Option<PathBuf>,
}
