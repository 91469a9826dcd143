//! The arguments of `llmtool batch`.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use crate::cli::ModelArgs;

/// Run a tool over every row of a dataset (CSV or JSON Lines), many rows at once, each row's
/// result written once to OUT (JSON Lines or CSV) even across crashes: rerun the same command
/// to finish.
#[allow(clippy::struct_excessive_bools, reason = "independent command-line flags")]
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool batch classify.json reviews.csv -o labels.jsonl -j 16\n  llmtool batch summarize.json tickets.jsonl -o summaries.csv --map text=body --id ticket\n  llmtool batch classify.json reviews.csv -o labels.jsonl --retry-failed\n  llmtool batch classify.json reviews.csv -o labels.jsonl -m openai/gpt-4o-mini --via provider-batch\n  llmtool batch status labels.jsonl\n\nColumns fill the variables of the same name (--map VAR=COLUMN for others); a multi-select\ncolumn is a JSON list or a comma list. A journal beside OUT (OUT.journal) records the rows done:\na rerun skips them, whatever their order. See docs/batch.md.",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub(crate) struct BatchArgs {
    #[command(subcommand)]
    pub(crate) action: Option<BatchAction>,
    /// The tool file.
    #[arg(value_name = "TOOL", required = true)]
    pub(crate) tool: Option<PathBuf>,
    /// The rows: a .csv (with a header row), .jsonl or .parquet file, or `-` for JSON Lines
    /// on standard input.
    #[arg(value_name = "DATA", required = true)]
    pub(crate) data: Option<PathBuf>,
    /// Where the results go: .jsonl, .csv or .parquet, one record per row.
    #[arg(long, short = 'o', value_name = "OUT", required = true)]
    pub(crate) out: Option<PathBuf>,
    /// Rows run at once.
    #[arg(long, short = 'j', default_value_t = 8, value_name = "N")]
    pub(crate) jobs: usize,
    /// Fill variable VAR from COLUMN (repeat for more).
    #[arg(long = "map", value_name = "VAR=COLUMN")]
    pub(crate) map: Vec<String>,
    /// The column that identifies a row (default: its number, from 1).
    #[arg(long, value_name = "COLUMN")]
    pub(crate) id: Option<String>,
    /// Run again the rows that failed (their new results replace the old).
    #[arg(long)]
    pub(crate) retry_failed: bool,
    /// Write OUT in the rows' order (it is written again at the end).
    #[arg(long)]
    pub(crate) keep_order: bool,
    /// Text cells that start with `@` name documents (PDF, DOCX, ODT, HTML, Markdown, text),
    /// relative to the dataset's folder: the document's text is the value (`@@` starts a value
    /// with `@`). Without it, cells are taken as written.
    #[arg(long)]
    pub(crate) documents: bool,
    /// Keep only a hash of each row's values in the run log, not the values (see `llmtool
    /// logs`).
    #[arg(long)]
    pub(crate) no_log_values: bool,
    /// Print the rows, input tokens and worst-case cost; send nothing, write nothing.
    #[arg(long)]
    pub(crate) estimate: bool,
    /// For an image tool: the folder its pictures go to, `row-ROW-1.png` for each row (the
    /// row's output is their paths). By default `OUT-pictures`, beside the output.
    #[arg(long, value_name = "DIR")]
    pub(crate) pictures: Option<PathBuf>,
    /// Start no new row once this many US dollars are spent (earlier runs of the batch
    /// included); rerun with a higher limit to go on.
    #[arg(long, value_name = "USD")]
    pub(crate) max_cost: Option<f64>,
    /// Where the rows run: `here` (each row a request, -j at a time), or `provider-batch`
    /// (the provider's own batch engine, at its batch price, answered within 24 hours).
    #[arg(long, value_enum, default_value_t = Via::Here)]
    pub(crate) via: Via,
    /// With --via provider-batch: send the rows and return without waiting; the same
    /// command run again collects the answers.
    #[arg(long)]
    pub(crate) detach: bool,
    /// With --via provider-batch: the first wait before looking at a batch again; it
    /// doubles each time, up to 5 minutes.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    pub(crate) poll: f64,
    /// With --via provider-batch: the most rows in one provider batch.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub(crate) rows_per_batch: usize,
    #[command(flatten)]
    pub(crate) target: ModelArgs,
}

/// Where a batch's rows run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Via {
    Here,
    ProviderBatch,
}

/// What `llmtool batch` does besides running a batch.
#[derive(Debug, Subcommand)]
pub(crate) enum BatchAction {
    /// Show where provider batches are: ID is a provider's batch id (`batch_...` OpenAI,
    /// `msgbatch_...` Anthropic, `batches/...` Gemini), or the OUT of a batch run with
    /// `--via provider-batch` (every batch it sent).
    #[command(
        after_help = "Examples:\n  llmtool batch status labels.jsonl\n  llmtool batch status batch_abc123\n  llmtool batch status batch_abc123 --provider groq"
    )]
    Status {
        /// A provider's batch id, or the OUT of a batch sent with `--via provider-batch`.
        #[arg(value_name = "ID")]
        id: String,
        #[command(flatten)]
        target: ModelArgs,
    },
    /// Ask the provider to stop a batch (ID as for `status`); rows already answered stay
    /// answered, and a rerun of the batch collects what there is.
    #[command(
        after_help = "Examples:\n  llmtool batch cancel labels.jsonl\n  llmtool batch cancel msgbatch_abc123"
    )]
    Cancel {
        /// A provider's batch id, or the OUT of a batch sent with `--via provider-batch`.
        #[arg(value_name = "ID")]
        id: String,
        #[command(flatten)]
        target: ModelArgs,
    },
}
