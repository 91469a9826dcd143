//! A Model Context Protocol server for LLM tool files: each tool is served as an MCP prompt
//! (rendered with its arguments) and as an MCP tool (run on a model), over stdio or
//! Streamable HTTP, with the files watched for changes.
//!
//! Built on `rmcp`, the official Rust SDK. [`Library`] reads and names the tools, [`Server`]
//! answers the protocol, [`Runner`] is how a tool reaches a model (`llmtool_runtime`'s, or a test's stand-in), and
//! [`watch`] keeps the library in step with the files.

mod audience;
pub mod connections;
mod guard;
mod icons;
mod library;
mod prompts;
mod quick;
mod server;
mod sessions;
mod tools;
pub mod transport;
pub mod watch;

pub use audience::Audience;
pub use library::{ANSWER_KEY, Entry, FileProblem, Library, LibraryOptions, Structured};
pub use llmtool_runtime::{AnswerFuture, Runner};
pub use server::{Only, RunLimits, SERVER_BUSY, Server};
