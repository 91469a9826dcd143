//! The arguments of `llmtool completions`.

use clap::Args;

/// Print a shell completion script.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  llmtool completions bash > ~/.local/share/bash-completion/completions/llmtool"
)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete in.
    pub(crate) shell: clap_complete::Shell,
}
