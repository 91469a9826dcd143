//! The arguments of `llmtool logs` and `llmtool usage`.

use clap::{Args, ValueEnum};

use crate::cli::ReportFormat;

/// List recent runs from the run log, newest first.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool logs                       # the last 10 runs\n  llmtool logs -n 50 --tool teach-me-anything\n  llmtool logs --model openai/gpt-4o --since 7d --format json\n\nEvery `llmtool run` is logged in $XDG_DATA_HOME/llmtool/runs.db (see docs/usage.md);\nLLMTOOL_NO_LOG=1 turns logging off, `run --no-log-values` keeps only a hash of the values."
)]
pub(crate) struct LogsArgs {
    /// How many runs.
    #[arg(short = 'n', long = "count", default_value_t = 10, value_name = "N")]
    pub(crate) count: u32,
    /// Only the runs of this tool (its `prompt_name`, or its path).
    #[arg(long, value_name = "TOOL")]
    pub(crate) tool: Option<String>,
    /// Only the runs of this model (`model` or `provider/model`).
    #[arg(long, value_name = "MODEL")]
    pub(crate) model: Option<String>,
    /// Only the runs since a date (2026-11-01), a time (2026-11-01T09:00:00Z) or a span back
    /// from now (30m, 24h, 7d).
    #[arg(long, value_name = "WHEN")]
    pub(crate) since: Option<String>,
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub(crate) format: ReportFormat,
}

/// What `usage` totals by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum UsageBy {
    Tool,
    Model,
    Day,
}

/// Total the tokens and cost of the logged runs, by tool, model or day.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool usage                      # by model, every run logged\n  llmtool usage --by tool --since 30d\n  llmtool usage --by day --format json"
)]
pub(crate) struct UsageArgs {
    #[arg(long, value_enum, default_value_t = UsageBy::Model)]
    pub(crate) by: UsageBy,
    /// Only the runs since a date, a time or a span back from now (as `logs --since`).
    #[arg(long, value_name = "WHEN")]
    pub(crate) since: Option<String>,
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub(crate) format: ReportFormat,
}
