//! The arguments of `llmtool render`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cli::VariableArgs;

/// What `render` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum RenderFormat {
    /// Exactly the rendered prompt.
    Text,
    /// `{prompt, variables, parameters, model_version, expected_output}` for other programs.
    Json,
}

/// Print a tool's prompt with values filled in for its variables.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool render examples/teach-me-anything.json --var topic=tides --var level=beginner\n  llmtool render tool.json --var tags=news --var tags=sport   # a multi-select with two items\n  llmtool render tool.json --vars values.json --format json"
)]
pub(crate) struct RenderArgs {
    /// The tool file, or `-` for standard input.
    #[arg(value_name = "TOOL")]
    pub(crate) tool: PathBuf,
    #[command(flatten)]
    pub(crate) variables: VariableArgs,
    /// How the prompt is printed.
    #[arg(long, value_enum, default_value_t = RenderFormat::Text)]
    pub(crate) format: RenderFormat,
}
