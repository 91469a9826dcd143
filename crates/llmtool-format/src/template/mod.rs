//! Prompt templates: finding `{{name}}` placeholders, compiling a prompt once, checking the
//! values given for a tool's variables, and rendering.

mod compiled;
mod inputs;
pub mod problems;
mod scan;
mod tool_template;

pub use compiled::{LIST_SEPARATOR, Piece, Template, Value};
pub use inputs::{Input, Inputs, InputsError};
pub use scan::{Placeholder, holds_braces, placeholders};
pub use tool_template::{ToolTemplate, VariableSpec};
