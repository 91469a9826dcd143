//! The canonical form of a tool file, and JSON string quoting.

mod quote;

pub use quote::{quote, write_quoted};
