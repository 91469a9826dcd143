//! Converting tools to and from the places tools live: function-calling APIs (OpenAI,
//! Anthropic, Gemini, MCP, JSON Schema), Emacs Lisp (gptel, llm.el), prompt files (Prompty,
//! Dotprompt, `llm`, Semantic Kernel, Langfuse, OpenAI's stored prompts) and promptfoo's
//! configurations, through one target-neutral function form. The format itself is
//! `llmtool-format`'s; only the crates that convert depend on this one.

pub mod codes;
mod detect;
mod elisp;
mod formats;
mod function;
mod import;
mod imported_check;
mod lists;
mod plain_schema;
pub(crate) mod prompt_files;
pub mod promptfoo;
mod sibling_files;
mod targets;
mod write;

pub use llmtool_format::naming;

pub use detect::{Candidate, candidates, detect, detect_value};
pub use elisp::{
    ElispFlavor, ElispOptions, GPTEL_CATEGORY, looks_like_elisp, read_elisp, write_elisp,
};
pub use formats::{
    Family, Format, Source, read_source, read_source_in, read_sources, with_missing_metadata,
};
pub use function::{
    ArgumentError, Converted, FunctionTool, inputs_from_arguments, is_parameter_key,
    parameter_keys, prompt_from_arguments,
};
pub use import::{tool_file, tool_value};
pub use imported_check::errors_in_source;
pub use lists::{ListEntry, entries};
pub use prompt_files::{PromptFormat, langfuse, openai_prompt, semantic_kernel};
pub use sibling_files::{NoFolder, SiblingFiles, outside_folder};
pub use targets::{FunctionFormat, read_mcp_prompt};
pub use write::{WriteError, WriteOptions, Written};

/// Every diagnostic code llmtool has, in code order: the format's (`llmtool_format::rules::ALL`)
/// and the conversions' ([`codes::ALL`]). `docs/diagnostics.md` documents these.
pub fn all_rules() -> Vec<&'static llmtool_format::rules::Rule> {
    let mut rules: Vec<_> = llmtool_format::rules::ALL.iter().chain(codes::ALL).copied().collect();
    rules.sort_by_key(|rule| rule.code);
    rules
}
