//! The arguments of `llmtool show`.

use std::path::PathBuf;

use clap::Args;

/// Show a readable summary of a tool: what it does, its variables, parameters and output.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  llmtool show examples/pair-programmer.json")]
pub(crate) struct ShowArgs {
    /// The tool file, or `-` for standard input.
    #[arg(value_name = "TOOL")]
    pub(crate) tool: PathBuf,
}
