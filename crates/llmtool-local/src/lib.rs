//! The embedded local model: a small llama-architecture GGUF model run on the CPU (our own
//! forward pass and SIMD kernels; candle reads the GGUF file), so that any tool runs offline,
//! with no key.

pub mod chat;
pub mod constrain;
pub mod engine;
mod llama;
pub mod model;
mod pip;
pub mod provider;
pub mod sampler;
pub mod store;
pub mod tokenizer;

pub use constrain::Constraint;
pub use engine::{GenerateOptions, Generation};
pub use model::LocalModel;

/// What can go wrong with the local model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocalError {
    #[error("{0}")]
    Io(String),
    #[error("the local model cannot be used: {0}")]
    Model(String),
}
