//! The *JSON Format for LLM Tools* as a pure Rust library, the floor every other crate stands on.
//!
//! - [`syntax`] parses a tool file leniently into a tree with byte spans,
//! - [`model`] lowers that tree into the typed [`Tool`](model::Tool),
//! - [`rules`] checks it and yields [`Diagnostic`]s; [`Document`] does all three in one call,
//! - [`template`] compiles `model_prompt` once and renders it many times, and [`chat`] reads
//!   a chat prompt's turns,
//! - [`format`] prints the canonical form and applies fixes, and [`report`] shows diagnostics
//!   to people and programs.
//!
//! Nothing here touches the file system, the environment, the clock or the network.

pub mod chat;
pub mod diagnostic;
pub mod document;
pub mod format;
pub mod image;
pub mod limits;
pub mod model;
pub mod naming;
pub mod output;
pub mod report;
pub mod rules;
pub mod schema;
pub mod smart;
pub mod span;
pub mod suggest;
pub mod suite;
pub mod syntax;
pub mod template;
pub mod yaml;

pub use diagnostic::{Diagnostic, Severity};
pub use document::Document;
pub use span::{LineIndex, Span};
