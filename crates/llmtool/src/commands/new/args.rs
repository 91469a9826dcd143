//! The arguments of `llmtool new`.

use std::path::PathBuf;

use clap::Args;

/// Write a new, valid, canonical tool file to start from.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool new \"Release Notes\" --var changes --select tone=formal,casual\n  llmtool new \"Tagger\" --multi tags=news,sport,tech --prompt \"Tag this: {{text}}\" --var text\n  llmtool new \"Word Count\" --smart --var text     # a smart tool: Python execute(variables)\n\nOn a terminal, what is not given as a flag is asked for."
)]
pub(crate) struct NewArgs {
    /// The tool's name (`prompt_name`); the file is named after it unless `--output` is given.
    pub(crate) name: Option<String>,
    /// What the tool does, in a sentence.
    #[arg(long)]
    pub(crate) description: Option<String>,
    /// The prompt; by default one is written that uses every variable.
    #[arg(long)]
    pub(crate) prompt: Option<String>,
    /// A text variable.
    #[arg(long = "var", value_name = "NAME")]
    pub(crate) text_vars: Vec<String>,
    /// A single-select variable with its choices; the first is the default.
    #[arg(long = "select", value_name = "NAME=A,B,...")]
    pub(crate) selects: Vec<String>,
    /// A multi-select variable with its choices.
    #[arg(long = "multi", value_name = "NAME=A,B,...")]
    pub(crate) multis: Vec<String>,
    /// Where to write (`-` for standard output).
    #[arg(long, short)]
    pub(crate) output: Option<PathBuf>,
    /// Overwrite an existing file.
    #[arg(long)]
    pub(crate) force: bool,
    /// Write a smart tool: Python `tool_code` whose `execute(variables)` gives the answer
    /// (and may ask a model with `llm()`), in the smart tools' format.
    #[arg(long, conflicts_with = "prompt")]
    pub(crate) smart: bool,
}
