//! Converting tools to and from the places tools live: function-calling APIs (OpenAI,
//! Anthropic, Gemini, MCP, JSON Schema) first, through one target-neutral function form.

pub mod codes;
mod function;
mod import;
pub mod naming;
mod targets;

pub use function::{Converted, FunctionTool, is_parameter_key};
pub use import::{tool_file, tool_value};
pub use targets::{FunctionFormat, read_mcp_prompt};
