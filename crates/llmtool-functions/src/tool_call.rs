//! A library tool offered as a function: its spec is the tool's function form (the converters'
//! one rule for parameters), and a model's arguments are read back into the tool's values and
//! rendered into its prompt, as any run of it would be.

use llmtool_convert::{FunctionTool, inputs_from_arguments};
use llmtool_format::model::Tool;
use llmtool_format::template::{Inputs, ToolTemplate};
use llmtool_providers::functions::{FunctionCall, FunctionSpec};

/// The function `tool` is offered as, named `name`.
pub fn tool_spec(name: &str, tool: &Tool) -> FunctionSpec {
    let form = FunctionTool::from_tool(tool, Some(name), &[]).value;
    FunctionSpec { name: form.name, description: form.description, parameters: form.parameters }
}

/// The prompt of a run of `tool` with the values `call` gives, and the values; or why the
/// call does not fit the tool (for the model to read).
pub fn prompt_of(tool: &Tool, call: &FunctionCall) -> Result<(String, Inputs), String> {
    let arguments = serde_json::Value::Object(call.arguments()?);
    let template = ToolTemplate::new(tool);
    let inputs =
        inputs_from_arguments(template.variables(), &arguments).map_err(|e| e.to_string())?;
    let prompt = template.render(&inputs).map_err(|problems| {
        problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; ")
    })?;
    Ok((prompt, inputs))
}
