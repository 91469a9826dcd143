//! The arguments of `llmtool providers`.

use std::path::PathBuf;

use clap::Args;

use crate::commands::run::RunFormat;

/// List the providers llmtool knows, and which are ready to use (keys are never shown).
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  llmtool providers\n  llmtool providers --format json")]
pub(crate) struct ProvidersArgs {
    /// How the list is printed.
    #[arg(long, value_enum, default_value_t = RunFormat::Text)]
    pub(crate) format: RunFormat,
    /// The configuration file (default: `$XDG_CONFIG_HOME/llmtool/config.toml`).
    #[arg(long, value_name = "FILE", env = "LLMTOOL_CONFIG")]
    pub(crate) config: Option<PathBuf>,
}
