//! The form every function-calling API shares: a name, a description and the parameters as a
//! JSON Schema object. A tool's variables become its parameters.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::codes::{DROPPED_FIELD, MISSING_DESCRIPTION, RENAMED_PARAMETER};
use super::naming::{self, MAX_NAME};
use llmtool_format::diagnostic::Diagnostic;
use llmtool_format::model::{Tool, VariableKind};
use llmtool_format::span::Span;
use llmtool_format::template::{Inputs, ToolTemplate, Value as TemplateValue, VariableSpec};

/// A function tool, target-neutral.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionTool {
    /// Portable snake_case (see [`naming`]).
    pub name: String,
    /// The human name (`prompt_name`), for targets that have a title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    /// A JSON Schema object: `type`, `properties`, `required`.
    pub parameters: Value,
    /// The schema of the tool's answer, when the source gives one (an MCP `outputSchema`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
}

/// A conversion's result with what it had to change or leave out.
#[derive(Debug, Clone)]
pub struct Converted<T> {
    pub value: T,
    pub diagnostics: Vec<Diagnostic>,
}

impl FunctionTool {
    /// The function form of `tool`; `name` overrides the name made from `prompt_name`.
    /// `carried` lists the top-level fields the target keeps besides name, description and
    /// variables (a warning names every other field the tool has).
    pub fn from_tool(tool: &Tool, name: Option<&str>, carried: &[&str]) -> Converted<FunctionTool> {
        let mut diagnostics = Vec::new();
        let title = tool.name().map(str::to_owned);
        let name = match name {
            Some(name) => name.to_owned(),
            None => naming::slug(title.as_deref().unwrap_or("tool"), MAX_NAME),
        };
        let description = match tool.metadata.as_ref().and_then(|m| m.description.as_ref()) {
            Some(description) => description.value.clone(),
            None => {
                let made = title.clone().unwrap_or_else(|| name.replace('_', " "));
                diagnostics.push(
                    Diagnostic::new(
                        &MISSING_DESCRIPTION,
                        format!("the tool has no description; `{made}` is used"),
                    )
                    .at(tool.metadata.as_ref().map_or(tool.span, |m| m.span))
                    .with_help("add `metadata.description`: models choose tools by it"),
                );
                made
            }
        };
        let template = ToolTemplate::new(tool);
        let parameters = parameters_schema(template.variables(), &mut diagnostics);
        for (field, span) in present_fields(tool) {
            if !carried.contains(&field) {
                diagnostics.push(
                    Diagnostic::new(
                        &DROPPED_FIELD,
                        format!("`{field}` is not carried by this target"),
                    )
                    .at(span),
                );
            }
        }
        let function = FunctionTool { name, title, description, parameters, output: None };
        Converted { value: function, diagnostics }
    }
}

/// Each variable's key in the function form's parameters, in the variables' order: its own
/// name where every API takes it, else a snake_case name made from it, each distinct. The one
/// rule that names parameters: the schema is written with it, and a model's arguments are read
/// back with it ([`inputs_from_arguments`]).
pub fn parameter_keys(variables: &[VariableSpec]) -> Vec<String> {
    let mut keys: Vec<String> = variables
        .iter()
        .map(|v| {
            if is_parameter_key(&v.name) { v.name.clone() } else { naming::slug(&v.name, MAX_NAME) }
        })
        .collect();
    naming::distinct(&mut keys, MAX_NAME);
    keys
}

/// The prompt of a run of `tool` with a model's `arguments` to its function form (read back by
/// [`inputs_from_arguments`]), and the values; or why they do not fit (for the model to read):
/// what a tool offered to another tool's model as a function runs on.
pub fn prompt_from_arguments(tool: &Tool, arguments: &Value) -> Result<(String, Inputs), String> {
    let template = ToolTemplate::new(tool);
    let inputs =
        inputs_from_arguments(template.variables(), arguments).map_err(|e| e.to_string())?;
    let prompt = template.render(&inputs).map_err(|problems| {
        problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>().join("; ")
    })?;
    Ok((prompt, inputs))
}

/// Why a model's arguments do not fit a tool's parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    #[error("the arguments must be a JSON object of parameter names to values, found {0}")]
    NotAnObject(&'static str),
    #[error("`{key}` is not a parameter of this tool; its parameters are {known}")]
    Unknown { key: String, known: String },
    #[error("`{key}` must be {expected}, found {found}")]
    WrongType { key: String, expected: &'static str, found: &'static str },
    #[error("`{key}` and `{other}` name the same parameter")]
    Twice { key: String, other: String },
}

/// A model's arguments to the function form of a tool (an object keyed as the exported schema
/// names the parameters: [`parameter_keys`], or by the variables' own names), read back into
/// the tool's values. `null` is a parameter not given (strict schemas send it for optional
/// ones). A text or single-select parameter takes a string (a number or a boolean is taken as
/// its text); a multi-select one an array of strings, or one string. The values themselves
/// (allowed values, missing ones) are checked when the template resolves them.
pub fn inputs_from_arguments(
    variables: &[VariableSpec],
    arguments: &Value,
) -> Result<Inputs, ArgumentError> {
    let Value::Object(arguments) = arguments else {
        return Err(ArgumentError::NotAnObject(json_kind(arguments)));
    };
    let keys = parameter_keys(variables);
    let mut inputs = Inputs::new();
    let mut given: Vec<(&str, &str)> = Vec::new();
    for (key, value) in arguments {
        let at = keys.iter().position(|k| k == key);
        let at = at.or_else(|| variables.iter().position(|v| &v.name == key));
        let Some(variable) = at.map(|i| &variables[i]) else {
            let known = keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
            let known = if known.is_empty() { "none".to_owned() } else { known };
            return Err(ArgumentError::Unknown { key: key.clone(), known });
        };
        if let Some((other, _)) = given.iter().find(|(_, name)| *name == variable.name) {
            return Err(ArgumentError::Twice { key: key.clone(), other: (*other).to_owned() });
        }
        given.push((key, &variable.name));
        let scalar = matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_));
        let fits = match (variable.kind, value) {
            (_, Value::Null) => true,
            (VariableKind::MultiSelect, Value::Array(items)) => items
                .iter()
                .all(|item| matches!(item, Value::String(_) | Value::Number(_) | Value::Bool(_))),
            _ => scalar,
        };
        if !fits {
            let expected = if variable.kind == VariableKind::MultiSelect {
                "an array of strings"
            } else {
                "a string"
            };
            let found = json_kind(value);
            return Err(ArgumentError::WrongType { key: key.clone(), expected, found });
        }
        // Checked above: a value `add_json` takes.
        let _ = inputs.add_json(&variable.name, value, Some(variable));
    }
    Ok(inputs)
}

/// What kind of JSON value `value` is, in words.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The JSON Schema object of the variables.
fn parameters_schema(variables: &[VariableSpec], diagnostics: &mut Vec<Diagnostic>) -> Value {
    let keys = parameter_keys(variables);
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (variable, key) in variables.iter().zip(keys) {
        let mut schema = variable_schema(variable);
        if key != variable.name {
            diagnostics.push(
                Diagnostic::new(
                    &RENAMED_PARAMETER,
                    format!("variable `{}` becomes parameter `{key}`", variable.name),
                )
                .at(variable.declared_at)
                .with_help("the original name is kept as the parameter's `title`"),
            );
            schema.insert("title".into(), Value::String(variable.name.clone()));
        }
        if variable.is_required() {
            required.push(Value::String(key.clone()));
        }
        properties.insert(key, Value::Object(schema));
    }
    json!({ "type": "object", "properties": properties, "required": required })
}

fn variable_schema(variable: &VariableSpec) -> Map<String, Value> {
    let strings =
        || Value::Array(variable.allowed_values.iter().cloned().map(Value::String).collect());
    let mut schema = Map::new();
    match variable.kind {
        VariableKind::Text => {
            schema.insert("type".into(), "string".into());
        }
        VariableKind::SingleSelect => {
            schema.insert("type".into(), "string".into());
            schema.insert("enum".into(), strings());
        }
        VariableKind::MultiSelect => {
            schema.insert("type".into(), "array".into());
            schema.insert("items".into(), json!({ "type": "string", "enum": strings() }));
            schema.insert("uniqueItems".into(), Value::Bool(true));
        }
    }
    if let Some(description) = &variable.description {
        schema.insert("description".into(), Value::String(description.clone()));
    }
    if let Some(default) = &variable.default {
        let default = match default {
            TemplateValue::Text(text) => Value::String(text.clone()),
            TemplateValue::List(items) => items.iter().cloned().map(Value::String).collect(),
        };
        schema.insert("default".into(), default);
    }
    schema
}

/// Whether every function-calling API takes `key` as a parameter name:
/// `[A-Za-z0-9_.-]`, 1 to 64 characters.
pub fn is_parameter_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_NAME
        && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The top-level fields present in `tool` (besides the name, description and variables, which
/// every target carries), with their spans.
fn present_fields(tool: &Tool) -> Vec<(&'static str, Span)> {
    let mut fields = Vec::new();
    let mut add = |name: &'static str, span: Option<Span>| {
        if let Some(span) = span {
            fields.push((name, span));
        }
    };
    add("model_prompt", tool.model_prompt.as_ref().map(|p| p.span));
    add("version", tool.version.as_ref().map(|v| v.span));
    // A smart tool's code is what runs behind the function, wherever the file holds it.
    add("tool_code", tool.code().map(|c| c.span));
    if let Some(metadata) = &tool.metadata {
        add("usage_notes", metadata.usage_notes.as_ref().map(|v| v.span));
        add("model_version", metadata.model_version.as_ref().map(|v| v.span));
        add("creator", metadata.creator.as_ref().map(|v| v.span));
        add("parameters", metadata.parameters.as_ref().map(|v| v.span));
        add("expected_output", metadata.expected_output.as_ref().map(|v| v.span));
        add("avatar", metadata.avatar.as_ref().map(|v| v.span));
        add("timestamp", metadata.timestamp.as_ref().map(|v| v.span));
        add("requirements", metadata.requirements.as_ref().map(|v| v.span));
        add("functions", metadata.functions.as_ref().map(|v| v.span));
    }
    fields
}

impl FunctionTool {
    /// The tool as an MCP prompt (`prompts/list` entry): each variable an argument, required
    /// when it has no default, its description stating its type, default and allowed values.
    pub fn mcp_prompt(&self, tool: &Tool) -> Value {
        let template = ToolTemplate::new(tool);
        let arguments: Vec<Value> = template
            .variables()
            .iter()
            .map(|variable| {
                json!({
                    "name": variable.name,
                    "description": argument_description(variable),
                    "required": variable.is_required(),
                })
            })
            .collect();
        let mut prompt = json!({ "name": self.name });
        if let Some(title) = &self.title {
            prompt["title"] = Value::String(title.clone());
        }
        prompt["description"] = Value::String(self.description.clone());
        prompt["arguments"] = Value::Array(arguments);
        prompt
    }
}

/// A variable described for an MCP client, which knows arguments only as strings.
pub(crate) fn argument_description(variable: &VariableSpec) -> String {
    let mut parts = Vec::new();
    if let Some(description) = &variable.description {
        parts.push(description.trim_end_matches('.').to_owned());
    }
    let kind = match variable.kind {
        VariableKind::Text => "Text".to_owned(),
        VariableKind::SingleSelect => format!("One of: {}", variable.allowed_values.join(", ")),
        VariableKind::MultiSelect => format!(
            "Any of: {} (a JSON array or a comma-separated list)",
            variable.allowed_values.join(", ")
        ),
    };
    parts.push(kind);
    if let Some(default) = &variable.default {
        let shown = match default {
            TemplateValue::Text(text) => text.clone(),
            TemplateValue::List(items) => items.join(", "),
        };
        parts.push(format!("Default: {shown}"));
    }
    parts.join(". ") + "."
}
