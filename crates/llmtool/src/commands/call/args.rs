//! The arguments of `llmtool call`.

use std::path::PathBuf;

use clap::Args;

use crate::cli::ModelArgs;
use crate::commands::run::{RunFormat, SandboxArgs, TurnArgs};

/// Run a tool with the arguments a model gave its exported function form (`llmtool export
/// --to openai|anthropic|gemini|mcp-tool|gptel|llm-el`): what an agent framework, gptel or
/// llm.el runs when the model calls the tool. The arguments are checked against the tool's
/// variables (exit 1, saying what is wrong), then the tool runs as `llmtool run` runs it.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool call examples/teach-me-anything.json '{\"topic\": \"tides\"}'\n  echo '{\"topic\": \"tides\"}' | llmtool call examples/teach-me-anything.json -\n  llmtool call registry:code-reviewer:production - --format json < arguments.json\n\nThe arguments are keyed as the exported schema names the parameters (`target_audience` for a\nvariable named `target audience`), or by the variables' own names; `null` is a parameter not\ngiven. A value is never read as `@FILE`: it is the model's, and stays text."
)]
pub(crate) struct CallArgs {
    /// The tool file, or a library name (`registry:SLUG`, `registry:SLUG:LABEL`,
    /// `registry:SLUG@VERSION`).
    #[arg(value_name = "TOOL")]
    pub(crate) tool: PathBuf,
    /// The arguments: a JSON object, exactly as the model produced it, or `-` to read it from
    /// standard input.
    #[arg(value_name = "ARGS-JSON")]
    pub(crate) arguments: String,
    #[command(flatten)]
    pub(crate) target: ModelArgs,
    #[command(flatten)]
    pub(crate) turn: TurnArgs,
    /// How the answer is printed: the answer alone, or with its usage and cost.
    #[arg(long, value_enum, default_value_t = RunFormat::Text)]
    pub(crate) format: RunFormat,
    /// How many times to ask again when the answer misses the expected output.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub(crate) max_repairs: u32,
    #[command(flatten)]
    pub(crate) sandbox: SandboxArgs,
    /// Run a `registry:` tool on this machine even when signed in to the library (which would
    /// otherwise run it, as `llmtool run` does).
    #[arg(long)]
    pub(crate) local: bool,
}
