//! Emacs Lisp tool definitions for gptel (`gptel-make-tool`) and llm.el (`llm-make-tool`):
//! written from a function tool, and read back with a reader for the subset they use.

mod printer;
mod read;
mod reader;
mod runner;
mod write;

use super::function::{Converted, FunctionTool};
use llmtool_format::diagnostic::Diagnostic;

/// Which package's constructor a form calls. Both take the same argument plists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElispFlavor {
    Gptel,
    LlmEl,
}

impl ElispFlavor {
    pub const fn constructor(self) -> &'static str {
        match self {
            ElispFlavor::Gptel => "gptel-make-tool",
            ElispFlavor::LlmEl => "llm-make-tool",
        }
    }

    pub const fn package(self) -> &'static str {
        match self {
            ElispFlavor::Gptel => "gptel",
            ElispFlavor::LlmEl => "llm.el",
        }
    }
}

/// What the form's `:function` and `:async` say, and gptel's options.
#[derive(Debug, Clone, Default)]
pub struct ElispOptions {
    /// The function's symbol. When `None`, the function runs the tool through `llmtool call`
    /// when `runner` names it, else it is a stub that asks to be replaced.
    pub function: Option<String>,
    /// The tool `llmtool call` runs: an absolute path, or a `registry:` name.
    pub runner: Option<String>,
    /// `:async t`: the function takes a callback first.
    pub asynchronous: bool,
    /// gptel's `:confirm t`: it asks before running the tool.
    pub confirm: bool,
    /// gptel's `:include t`: the tool's answer is put in the buffer too.
    pub include: bool,
}

/// The category gptel groups the exported tools under.
pub const GPTEL_CATEGORY: &str = "llmtool";

/// `tool` as a constructor call, with warnings about what the package will not send.
pub fn write_elisp(
    tool: &FunctionTool,
    flavor: ElispFlavor,
    options: &ElispOptions,
) -> Converted<String> {
    let (value, diagnostics) = write::tool_form(tool, flavor, options);
    Converted { value, diagnostics }
}

/// The tool defined in `text` (one `gptel-make-tool` or `llm-make-tool` form). Errors and
/// warnings are located in `text`.
pub fn read_elisp(text: &str) -> Result<Converted<FunctionTool>, Box<Diagnostic>> {
    read::read_tool(text)
}

/// Whether `text` looks like Lisp rather than JSON: its first non-blank character opens a list
/// or a comment.
pub fn looks_like_elisp(text: &str) -> bool {
    text.trim_start().starts_with(['(', ';'])
}
