//! The typed model of a tool file and the lowering that builds it from the syntax tree.

pub mod keys;
mod lower;
pub mod problems;
mod sent;
mod types;

pub use lower::lower;
pub use sent::SentString;
pub use types::*;
