//! The arguments of `llmtool conversations`.

use clap::{Args, Subcommand};

use crate::cli::ReportFormat;
use crate::commands::library::RegistryArgs;

/// Your conversations on the library's server (the studio's sidebar): the runs made there,
/// from the studio, Slack or `llmtool run registry:…` signed in.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  llmtool conversations                    # the newest first\n  llmtool conversations --search invoice\n  llmtool conversations show 01jq...       # its turns, each asked and answered\n\nThe library and token are the ones `llmtool login` saved (or --registry and LLMTOOL_TOKEN).\nA conversation started on this machine is in `llmtool logs` instead."
)]
pub(crate) struct ConversationsArgs {
    #[command(subcommand)]
    pub(crate) command: Option<ConversationsCommand>,
    /// Only the conversations whose title or turns hold these words.
    #[arg(long, value_name = "WORDS")]
    pub(crate) search: Option<String>,
    /// How they are printed.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub(crate) format: ReportFormat,
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConversationsCommand {
    /// One conversation: its turns, each asked and answered.
    Show {
        /// The conversation's id, as the list shows it.
        id: String,
        /// How it is printed.
        #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
        format: ReportFormat,
        #[command(flatten)]
        registry: RegistryArgs,
    },
}
