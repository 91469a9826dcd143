//! Smart tools, the sibling format whose work is Python code (`tool_code`, defining
//! `execute(variables)`) rather than a prompt: what `check` reads from the code and from its
//! `requirements`. Core never runs the code; `llmtool-sandbox` does, when asked.

pub mod code;
pub mod requirements;

pub use code::{CodeFacts, Execute, PYTHON_VERSION, facts};
pub use requirements::Requirement;
