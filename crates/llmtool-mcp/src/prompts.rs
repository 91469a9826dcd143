//! `prompts/get` and `completion/complete`: arguments read into a tool's inputs, the prompt
//! rendered as `llmtool render` renders it, and the allowed values of select variables offered
//! as completions.

use llmtool_format::Diagnostic;
use llmtool_format::model::VariableKind;
use llmtool_format::template::{Inputs, Value as TemplateValue, VariableSpec};
use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, PromptMessage, Role};
use serde_json::{Map, Value, json};

use crate::library::Entry;

/// The prompt of `entry` rendered with `arguments`, as one user message (a chat tool's as one
/// message a turn); or an invalid-params error naming every problem with the arguments.
pub(crate) fn get(
    entry: &Entry,
    arguments: Option<&Map<String, Value>>,
) -> Result<GetPromptResult, ErrorData> {
    let mut inputs = Inputs::new();
    for (name, value) in arguments.into_iter().flatten() {
        let variable = entry.template.variables().iter().find(|v| &v.name == name);
        if let Err(error) = inputs.add_json(name, value, variable) {
            let message = format!("invalid arguments for `{}`: {error}", entry.name);
            return Err(ErrorData::invalid_params(message, None));
        }
    }
    match entry.template.resolve(&inputs) {
        Ok(values) => {
            let messages = entry.template.render_turns(&values).into_iter().map(|turn| {
                // MCP's prompt messages are the user's or the assistant's: a chat's system
                // turn is given as the user's (docs/mcp.md, "Prompts").
                let role = if turn.role == "assistant" { Role::Assistant } else { Role::User };
                PromptMessage::new_text(role, turn.text)
            });
            let mut result = GetPromptResult::new(messages.collect());
            if let Some(description) = entry.prompt.description.as_ref() {
                result = result.with_description(description.clone());
            }
            Ok(result)
        }
        Err(problems) => Err(invalid_arguments(&entry.name, &problems)),
    }
}

/// Error -32602 with every problem: the message names each one, and `data.problems` lists them
/// with their codes and help.
pub(crate) fn invalid_arguments(name: &str, problems: &[Diagnostic]) -> ErrorData {
    let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    let data: Vec<Value> = problems
        .iter()
        .map(|p| {
            let mut problem = json!({ "code": p.code(), "message": p.message });
            if let Some(help) = &p.help {
                problem["help"] = json!(help);
            }
            problem
        })
        .collect();
    ErrorData::invalid_params(
        format!("invalid arguments for `{name}`: {}", messages.join("; ")),
        Some(json!({ "problems": data })),
    )
}

/// The allowed values of `variable` that start with what was typed (case-insensitive), the
/// default first. For a multi-select, the item after the last comma is completed and the items
/// before it are kept.
pub(crate) fn complete(variable: &VariableSpec, typed: &str) -> Vec<String> {
    if variable.kind == VariableKind::Text {
        return Vec::new();
    }
    let (before, current) = match typed.rsplit_once(',') {
        Some((before, current)) if variable.kind == VariableKind::MultiSelect => {
            (format!("{before}, "), current.trim_start())
        }
        _ => (String::new(), typed),
    };
    let current = current.to_lowercase();
    let defaults: Vec<&str> = match &variable.default {
        Some(TemplateValue::Text(text)) => vec![text.as_str()],
        Some(TemplateValue::List(items)) => items.iter().map(String::as_str).collect(),
        None => Vec::new(),
    };
    let mut values: Vec<&str> = variable.allowed_values.iter().map(String::as_str).collect();
    values.sort_by_key(|v| !defaults.contains(v));
    values
        .into_iter()
        .filter(|value| value.to_lowercase().starts_with(&current))
        .map(|value| format!("{before}{value}"))
        .collect()
}
