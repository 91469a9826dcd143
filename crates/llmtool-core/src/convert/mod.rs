//! Converting tools to and from the places tools live: function-calling APIs (OpenAI,
//! Anthropic, Gemini, MCP, JSON Schema) and Emacs Lisp (gptel, llm.el), through one
//! target-neutral function form.

pub mod codes;
mod detect;
mod elisp;
mod formats;
mod function;
mod import;
mod imported_check;
mod lists;
pub mod naming;
mod plain_schema;
pub(crate) mod prompt_files;
mod sibling_files;
mod targets;
mod write;

pub use detect::{Candidate, candidates, detect, detect_value};
pub use elisp::{
    ElispFlavor, ElispOptions, GPTEL_CATEGORY, looks_like_elisp, read_elisp, write_elisp,
};
pub use formats::{
    Family, Format, Source, read_source, read_source_in, read_sources, with_missing_metadata,
};
pub use function::{
    ArgumentError, Converted, FunctionTool, inputs_from_arguments, is_parameter_key, parameter_keys,
};
pub use import::{tool_file, tool_value};
pub use imported_check::errors_in_source;
pub use lists::{ListEntry, entries};
pub use prompt_files::{PromptFormat, langfuse, openai_prompt, semantic_kernel};
pub use sibling_files::{NoFolder, SiblingFiles, outside_folder};
pub use targets::{FunctionFormat, read_mcp_prompt};
pub use write::{WriteError, WriteOptions, Written};
