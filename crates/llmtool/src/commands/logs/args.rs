//! The arguments of `llmtool logs` and `llmtool usage`.

use clap::{Args, Subcommand, ValueEnum};

use crate::cli::ReportFormat;
use crate::commands::library::RegistryArgs;

/// How `logs` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogsFormat {
    /// For the terminal.
    Text,
    /// For other programs.
    Json,
    /// A conversation's transcript as Markdown (with `--cid`).
    Markdown,
}

/// List recent runs from the run log, newest first; `logs show ID` shows one run whole.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  llmtool logs                       # the last 10 runs\n  llmtool logs -n 50 --tool teach-me-anything\n  llmtool logs --model openai/gpt-4o --since 7d --format json\n  llmtool logs --origin batch        # the rows a batch sent\n  llmtool logs show 42               # one run whole: its values, prompt and answer\n  llmtool logs --conversations       # the last 10 conversations (run, chat, reply)\n  llmtool logs --cid 01jq... --format markdown   # one conversation as a transcript\n\nEvery run of `run`, `mcp`, `batch` and `test` is logged in $XDG_DATA_HOME/llmtool/runs.db\n(see docs/usage.md): a test's answers read from its cache are not runs and are not logged.\nLLMTOOL_NO_LOG=1 turns logging off; `--no-log-values` keeps only a hash of the values."
)]
pub(crate) struct LogsArgs {
    #[command(subcommand)]
    pub(crate) action: Option<LogsAction>,
    /// How many runs.
    #[arg(short = 'n', long = "count", default_value_t = 10, value_name = "N")]
    pub(crate) count: u32,
    /// Only the runs of this tool (its `prompt_name`, or its path).
    #[arg(long, value_name = "TOOL")]
    pub(crate) tool: Option<String>,
    /// Only the runs of this model (`model` or `provider/model`).
    #[arg(long, value_name = "MODEL")]
    pub(crate) model: Option<String>,
    /// Only the runs made by this command: `run`, `mcp`, `batch` or `test`.
    #[arg(long, value_name = "ORIGIN")]
    pub(crate) origin: Option<String>,
    /// Only the runs since a date (2026-11-01), a time (2026-11-01T09:00:00Z) or a span back
    /// from now (30m, 24h, 7d).
    #[arg(long, value_name = "WHEN")]
    pub(crate) since: Option<String>,
    /// List conversations (a tool's run and its follow-ups) instead of runs.
    #[arg(long, conflicts_with = "cid")]
    pub(crate) conversations: bool,
    /// Print this conversation as a transcript (its id, as `--conversations` lists it).
    #[arg(long, value_name = "ID")]
    pub(crate) cid: Option<String>,
    /// How the runs, or the transcript, are printed (`markdown`: a transcript only).
    #[arg(long, value_enum, default_value_t = LogsFormat::Text)]
    pub(crate) format: LogsFormat,
}

/// What `logs` does besides listing.
#[derive(Debug, Subcommand)]
pub(crate) enum LogsAction {
    /// Show one run whole: what ran it, the tool, the values, the prompt as sent, the model,
    /// the tokens and cost, and the answer (or the error).
    Show {
        /// The run's number, as `llmtool logs` lists it (`#42` or `42`).
        #[arg(value_name = "ID")]
        id: String,
        /// How the run is printed.
        #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
        format: ReportFormat,
    },
}

/// What `usage` totals by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum UsageBy {
    Tool,
    Model,
    Day,
    /// What ran them: `run`, `mcp`, `batch`, `test` (commands), `server`, `studio` (a
    /// library's).
    Origin,
}

impl UsageBy {
    /// Its name, as `GET /usage` takes it and the table's heading shows it.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            UsageBy::Tool => "tool",
            UsageBy::Model => "model",
            UsageBy::Day => "day",
            UsageBy::Origin => "origin",
        }
    }
}

/// Total the tokens and cost of the logged runs (or a tool library's), by tool, model, day or
/// origin.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool usage                      # by model, every run logged on this machine\n  llmtool usage --by tool --since 30d\n  llmtool usage --by origin          # run, mcp, batch, test\n  llmtool usage --library --by origin   # the team library's runs: server, studio, mcp\n\nThe run log has every run of this machine's commands (run, mcp, batch, test). Runs made\nthrough a team library (its API, its studio, its MCP endpoint) are kept in the library,\nwith who ran them: --library totals those (a viewer's token, from LLMTOOL_TOKEN)."
)]
pub(crate) struct UsageArgs {
    /// What the totals are by.
    #[arg(long, value_enum, default_value_t = UsageBy::Model)]
    pub(crate) by: UsageBy,
    /// Only the runs since a date, a time or a span back from now (as `logs --since`).
    #[arg(long, value_name = "WHEN")]
    pub(crate) since: Option<String>,
    /// How the totals are printed.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub(crate) format: ReportFormat,
    /// Total the runs kept by the tool library (`llmtool serve`) instead of this machine's.
    #[arg(long)]
    pub(crate) library: bool,
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}
